//===- TorchScriptLexer.cpp - Tokens of TorchScript IR text ---------------===//

#include "TorchScriptLexer.h"

namespace kb::ts {

Token Lexer::next() {
  skipSpace();
  Token t;
  t.loc = {line, col};
  if (pos >= buf.size())
    return t;
  size_t start = pos;
  char c = buf[pos];
  auto single = [&](Tok k) {
    advance();
    t.kind = k;
    t.text = buf.substr(start, 1);
    return t;
  };
  switch (c) {
  case '(':
    return single(Tok::LParen);
  case ')':
    return single(Tok::RParen);
  case '[':
    return single(Tok::LBracket);
  case ']':
    return single(Tok::RBracket);
  case '{':
    return single(Tok::LBrace);
  case '}':
    return single(Tok::RBrace);
  case ',':
    return single(Tok::Comma);
  case ':':
    return single(Tok::Colon);
  case '=':
    return single(Tok::Equal);
  case '?':
    return single(Tok::Question);
  case '*':
    return single(Tok::Star);
  case '<':
    return single(Tok::Less);
  case '>':
    return single(Tok::Greater);
  default:
    break;
  }
  if (c == '-' && peekChar(1) == '>') {
    advance();
    advance();
    t.kind = Tok::Arrow;
    t.text = buf.substr(start, 2);
    return t;
  }
  if (c == '%') {
    advance();
    // Debug names come from Python identifiers and module paths, which may
    // hold '-' (regnet's "block1-0").
    while (pos < buf.size() &&
           (isNameChar(buf[pos]) ||
            (buf[pos] == '-' && llvm::isAlnum(peekChar(1)))))
      advance();
    t.kind = Tok::Value;
    t.text = buf.slice(start + 1, pos);
    return t;
  }
  if (c == '"' || c == '\'') {
    char quote = c;
    advance();
    while (pos < buf.size() && buf[pos] != quote && buf[pos] != '\n') {
      if (buf[pos] == '\\' && pos + 1 < buf.size())
        advance();
      advance();
    }
    if (pos >= buf.size() || buf[pos] != quote) {
      t.kind = Tok::String;
      t.text = StringRef(); // unterminated: the parser reports it
      unterminated = true;
      return t;
    }
    advance();
    t.kind = Tok::String;
    t.text = buf.slice(start + 1, pos - 1);
    return t;
  }
  if (llvm::isDigit(c) ||
      (c == '-' && (llvm::isDigit(peekChar(1)) || peekChar(1) == '.'))) {
    bool isFloat = false;
    if (c == '-')
      advance();
    while (pos < buf.size()) {
      char d = buf[pos];
      if (llvm::isDigit(d)) {
        advance();
      } else if (d == '.' || d == 'e' || d == 'E') {
        isFloat = true;
        advance();
        if ((d == 'e' || d == 'E') && pos < buf.size() &&
            (buf[pos] == '-' || buf[pos] == '+'))
          advance();
      } else {
        break;
      }
    }
    t.kind = isFloat ? Tok::Float : Tok::Int;
    t.text = buf.slice(start, pos);
    return t;
  }
  if (c == '-')
    return single(Tok::Minus);
  if (isIdentStart(c)) {
    while (pos < buf.size()) {
      if (isNameChar(buf[pos]) && buf[pos] != '.') {
        advance();
      } else if (buf[pos] == ':' && peekChar(1) == ':') {
        advance();
        advance();
      } else if (buf[pos] == '.' &&
                 (isIdentStart(peekChar(1)) || llvm::isDigit(peekChar(1)))) {
        // Class paths may hold module names that start with a digit
        // (__torch__.10_ConvTranspose2d.Model).
        advance();
      } else {
        break;
      }
    }
    t.kind = Tok::Ident;
    t.text = buf.slice(start, pos);
    return t;
  }
  // Anything else is reported by the parser as an unexpected character.
  advance();
  t.kind = Tok::Eof;
  t.text = buf.substr(start, 1);
  badChar = true;
  return t;
}

StringRef Lexer::rawUntilCommentOrEOL() {
  size_t start = pos;
  while (pos < buf.size() && buf[pos] != '\n' && buf[pos] != '#')
    advance();
  return buf.slice(start, pos).trim();
}

StringRef Lexer::takeComment(unsigned line) {
  StringRef found;
  for (auto &[l, text] : comments)
    if (l == line)
      found = text;
  comments.clear();
  return found;
}

void Lexer::advance() {
  if (buf[pos] == '\n') {
    ++line;
    col = 1;
  } else {
    ++col;
  }
  ++pos;
}

void Lexer::skipSpace() {
  while (pos < buf.size()) {
    char c = buf[pos];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance();
    } else if (c == '#') {
      size_t start = pos + 1;
      unsigned l = line;
      while (pos < buf.size() && buf[pos] != '\n')
        advance();
      comments.emplace_back(l, buf.slice(start, pos).trim());
    } else {
      break;
    }
  }
}

} // namespace kb::ts
