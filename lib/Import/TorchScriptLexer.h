//===- TorchScriptLexer.h - Tokens of TorchScript IR text -------*- C++ -*-===//
//
// Private to lib/Import: the lexer of TorchScriptParser.cpp. Tokens carry
// their line and column; comments are kept for the source locations the
// tracer prints after a node.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_IMPORT_TORCHSCRIPTLEXER_H
#define KB_LIB_IMPORT_TORCHSCRIPTLEXER_H

#include "kb/Import/TorchScriptIR.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <utility>
#include <vector>

namespace kb::ts {

using llvm::StringRef;

enum class Tok {
  Eof,
  Ident,
  Value,
  Int,
  Float,
  String,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Equal,
  Arrow,
  Question,
  Star,
  Less,
  Greater,
  Minus
};

struct Token {
  Tok kind = Tok::Eof;
  StringRef text;
  Location loc;
};

class Lexer {
public:
  Lexer(StringRef buf) : buf(buf) {}

  Token next();

  /// Raw text to the end of the line or the next '#', for scope trailers.
  StringRef rawUntilCommentOrEOL();

  /// The comment that trails `line`, if one was skipped since the last call;
  /// forgets every comment seen so far.
  StringRef takeComment(unsigned line);

  bool badChar = false;
  bool unterminated = false;

private:
  static bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
  static bool isNameChar(char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.';
  }
  char peekChar(size_t off) const {
    return pos + off < buf.size() ? buf[pos + off] : '\0';
  }
  void advance();
  void skipSpace();

  StringRef buf;
  size_t pos = 0;
  unsigned line = 1, col = 1;
  std::vector<std::pair<unsigned, StringRef>> comments;
};

} // namespace kb::ts

#endif // KB_LIB_IMPORT_TORCHSCRIPTLEXER_H
