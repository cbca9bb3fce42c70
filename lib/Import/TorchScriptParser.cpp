//===- TorchScriptParser.cpp - TorchScript IR text parser -----------------===//
//
// Recursive descent over the grammar of torch/csrc/jit/ir/irparser.cpp, widened
// to what the printer emits for traced graphs: complete tensor types, scope
// trailers, source comments, tensor constants and nested blocks. Never
// crashes: every failure becomes a located error, and nesting depth is bounded
// so hostile input cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//

#include "TorchScriptLexer.h"

#include "kb/Import/TorchScriptIR.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace kb::ts;
using llvm::StringRef;

namespace {

constexpr unsigned kMaxDepth = 200;

/// The most elements a tensor type may have (2^48: 1 PB of float32).
constexpr uint64_t kMaxTensorElements = uint64_t(1) << 48;

class Parser {
public:
  Parser(StringRef text, StringRef bufferName) : lex(text) {
    srcMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
    consume();
  }

  llvm::Expected<Graph> parse() {
    Graph g;
    g.bufferName = srcMgr.getMemoryBuffer(1)->getBufferIdentifier().str();
    if (!isIdent("graph"))
      return error(cur.loc, "expected 'graph(' at the start of the IR text");
    g.body.loc = cur.loc;
    consume();
    if (auto err = parseParamList(g.body.params))
      return std::move(err);
    if (auto err = expect(Tok::Colon, "':' after the graph signature"))
      return std::move(err);
    if (auto err = parseBlockBody(g.body, /*isGraph=*/true, 0))
      return std::move(err);
    if (cur.kind != Tok::Eof || lex.badChar)
      return unexpected("end of input");
    return g;
  }

private:
  // ---- token helpers -------------------------------------------------------
  void consume() { cur = lex.next(); }
  bool isIdent(StringRef s) const {
    return cur.kind == Tok::Ident && cur.text == s;
  }
  llvm::Error error(Location loc, const llvm::Twine &msg) {
    std::string out;
    llvm::raw_string_ostream os(out);
    auto *mb = srcMgr.getMemoryBuffer(1);
    const char *p = mb->getBufferStart();
    // Map (line, col) back to a pointer for SourceMgr's caret output.
    unsigned l = 1;
    while (l < loc.line && p < mb->getBufferEnd()) {
      if (*p++ == '\n')
        ++l;
    }
    p += std::min<size_t>(loc.col ? loc.col - 1 : 0,
                          mb->getBufferEnd() - p);
    srcMgr.PrintMessage(os, llvm::SMLoc::getFromPointer(p),
                        llvm::SourceMgr::DK_Error, msg);
    return llvm::createStringError(llvm::inconvertibleErrorCode(), out);
  }
  llvm::Error unexpected(StringRef what) {
    if (lex.badChar)
      return error(cur.loc, "unexpected character '" + cur.text +
                                "' while looking for " + what);
    if (lex.unterminated)
      return error(cur.loc, "unterminated string literal");
    if (cur.kind == Tok::Eof)
      return error(cur.loc, "unexpected end of input, expected " + what);
    return error(cur.loc, "expected " + what + ", found '" + cur.text + "'");
  }
  llvm::Error expect(Tok kind, StringRef what) {
    if (cur.kind != kind || lex.badChar || lex.unterminated)
      return unexpected(what);
    consume();
    return llvm::Error::success();
  }
  llvm::Error enter(unsigned depth) {
    if (depth > kMaxDepth)
      return error(cur.loc, "nesting deeper than " + llvm::Twine(kMaxDepth) +
                                " levels");
    return llvm::Error::success();
  }

  // ---- values and types ----------------------------------------------------
  llvm::Error parseParamList(std::vector<ValueDef> &params) {
    if (auto err = expect(Tok::LParen, "'('"))
      return err;
    while (cur.kind != Tok::RParen) {
      ValueDef def;
      if (auto err = parseValueDef(def, /*typeRequired=*/false))
        return err;
      params.push_back(std::move(def));
      if (cur.kind == Tok::Comma) {
        consume();
        continue;
      }
      if (cur.kind != Tok::RParen)
        return unexpected("',' or ')' in the parameter list");
    }
    consume();
    return llvm::Error::success();
  }

  llvm::Error parseValueDef(ValueDef &def, bool typeRequired) {
    if (cur.kind != Tok::Value || cur.text.empty())
      return unexpected("a value name like '%x.1'");
    def.name = cur.text.str();
    def.loc = cur.loc;
    consume();
    if (cur.kind == Tok::Colon) {
      consume();
      return parseType(def.type, 0);
    }
    if (typeRequired)
      return unexpected("':' and a type");
    def.type.kind = Type::Kind::Tensor;
    return llvm::Error::success();
  }

  static bool isScalarTypeName(StringRef s) {
    return llvm::StringSwitch<bool>(s)
        .Cases({"Float", "Double", "Half", "BFloat16", "Long", "Int", "Short",
               "Char", "Byte", "Bool"}, true)
        .Cases({"ComplexFloat", "ComplexDouble", "ComplexHalf", "QInt8",
               "QUInt8", "QInt32", "Float8_e4m3fn", "Float8_e5m2"}, true)
        .Default(false);
  }

  static std::optional<Type::Kind> simpleType(StringRef name) {
    return llvm::StringSwitch<std::optional<Type::Kind>>(name)
        .Cases({"int", "SymInt"}, Type::Kind::Int)
        .Case("float", Type::Kind::Float)
        .Case("bool", Type::Kind::Bool)
        .Case("str", Type::Kind::Str)
        .Case("NoneType", Type::Kind::None)
        .Case("Device", Type::Kind::Device)
        .Case("number", Type::Kind::Number)
        .Case("Scalar", Type::Kind::Scalar)
        .Default(std::nullopt);
  }

  llvm::Error parseType(Type &type, unsigned depth) {
    if (auto err = enter(depth))
      return err;
    if (cur.kind == Tok::LParen) { // tuple "(T1, T2)"
      consume();
      type.kind = Type::Kind::Tuple;
      while (cur.kind != Tok::RParen) {
        Type elem;
        if (auto err = parseType(elem, depth + 1))
          return err;
        type.elems.push_back(std::move(elem));
        if (cur.kind == Tok::Comma)
          consume();
        else if (cur.kind != Tok::RParen)
          return unexpected("',' or ')' in a tuple type");
      }
      consume();
      return parseTypeSuffix(type, depth);
    }
    if (cur.kind != Tok::Ident)
      return unexpected("a type");
    StringRef name = cur.text;
    Location loc = cur.loc;
    consume();
    if (name == "Tensor") {
      type.kind = Type::Kind::Tensor;
    } else if (isScalarTypeName(name)) {
      type.kind = Type::Kind::Tensor;
      type.name = name.str();
      if (cur.kind == Tok::LParen)
        if (auto err = parseTensorDetails(type))
          return err;
    } else if (auto simple = simpleType(name)) {
      type.kind = *simple;
    } else if (name == "Tuple" || name == "List" || name == "Optional" ||
               name == "Dict" || name == "Future" || name == "Union") {
      // Python-style spellings: Tuple[int, int], List[Tensor], Dict(str, T).
      type.kind = name == "Tuple"      ? Type::Kind::Tuple
                  : name == "List"     ? Type::Kind::List
                  : name == "Optional" ? Type::Kind::Optional
                  : name == "Dict"     ? Type::Kind::Dict
                                       : Type::Kind::Other;
      type.name = name.str();
      if (cur.kind == Tok::LBracket || cur.kind == Tok::LParen) {
        Tok close = cur.kind == Tok::LBracket ? Tok::RBracket : Tok::RParen;
        consume();
        while (cur.kind != close) {
          Type elem;
          if (auto err = parseType(elem, depth + 1))
            return err;
          type.elems.push_back(std::move(elem));
          if (cur.kind == Tok::Comma)
            consume();
          else if (cur.kind != close)
            return unexpected("',' or a closing bracket in a type");
        }
        consume();
      }
    } else if (name.starts_with("__torch__") || name.contains('.')) {
      type.kind = Type::Kind::Class;
      type.name = name.str();
    } else {
      // Layout, ScalarType, MemoryFormat, Generator, Storage, Any, t, ...
      type.kind = Type::Kind::Other;
      type.name = name.str();
      (void)loc;
    }
    return parseTypeSuffix(type, depth);
  }

  llvm::Error parseTypeSuffix(Type &type, unsigned depth) {
    // "int[]", "Tensor?", "int[]?", "Tensor(a!)" alias annotations.
    while (true) {
      if (auto err = enter(depth++))
        return err;
      if (cur.kind == Tok::LBracket) {
        consume();
        if (auto err = expect(Tok::RBracket, "']' in a list type"))
          return err;
        Type elem = std::move(type);
        type = Type();
        type.kind = Type::Kind::List;
        type.elems.push_back(std::move(elem));
      } else if (cur.kind == Tok::Question) {
        consume();
        Type elem = std::move(type);
        type = Type();
        type.kind = Type::Kind::Optional;
        type.elems.push_back(std::move(elem));
      } else {
        return llvm::Error::success();
      }
    }
  }

  llvm::Error parseTensorDetails(Type &type) {
    Location start = cur.loc;
    consume(); // '('
    type.hasSizes = true;
    while (cur.kind != Tok::RParen) {
      if (cur.kind == Tok::Int) {
        int64_t v;
        if (cur.text.getAsInteger(10, v) || v < 0)
          return error(cur.loc, "invalid dimension size '" + cur.text + "'");
        type.sizes.push_back(v);
        type.hasSizes = true;
        consume();
      } else if (cur.kind == Tok::Star) {
        type.sizes.push_back(std::nullopt);
        type.hasSizes = true;
        consume();
      } else if (isIdent("SS")) { // symbolic size SS(-3)
        consume();
        if (auto err = expect(Tok::LParen, "'(' after SS"))
          return err;
        if (cur.kind != Tok::Int)
          return unexpected("a symbolic size index");
        consume();
        if (auto err = expect(Tok::RParen, "')'"))
          return err;
        type.sizes.push_back(std::nullopt);
        type.hasSizes = true;
      } else if (cur.kind == Tok::Ident) {
        StringRef key = cur.text;
        consume();
        if (auto err = expect(Tok::Equal, "'=' after '" + key.str() + "'"))
          return err;
        if (key == "strides") {
          if (auto err = expect(Tok::LBracket, "'[' starting the strides"))
            return err;
          if (auto err = parseInts(Tok::RBracket, "a stride",
                                   "',' or ']' in strides", type.strides))
            return err;
        } else if (key == "device") {
          if (cur.kind != Tok::Ident && cur.kind != Tok::String)
            return unexpected("a device name");
          type.device = cur.text.str();
          consume();
          if (cur.kind == Tok::Colon) {
            consume();
            if (cur.kind != Tok::Int)
              return unexpected("a device index");
            type.device += ":" + cur.text.str();
            consume();
          }
        } else {
          // requires_grad=0 and any future key=value detail.
          if (cur.kind != Tok::Int && cur.kind != Tok::Ident &&
              cur.kind != Tok::Float && cur.kind != Tok::String)
            return unexpected("a value for '" + key.str() + "'");
          consume();
        }
      } else {
        return unexpected("a dimension or tensor detail");
      }
      if (cur.kind == Tok::Comma)
        consume();
      else if (cur.kind != Tok::RParen)
        return unexpected("',' or ')' in a tensor type");
    }
    consume();
    if (!type.strides.empty() && type.strides.size() != type.sizes.size())
      return error(cur.loc, "tensor type has " +
                                llvm::Twine(type.sizes.size()) + " sizes but " +
                                llvm::Twine(type.strides.size()) + " strides");
    // Element counts and byte offsets are int64 everywhere after this (and
    // a product that wrapped made a kernel over 0 elements): no tensor may
    // hold more than any GPU could.
    uint64_t elements = 1;
    for (const std::optional<int64_t> &d : type.sizes)
      if (d && *d != 0 &&
          (elements > kMaxTensorElements / uint64_t(*d) ||
           (elements *= uint64_t(*d)) > kMaxTensorElements))
        return error(start, "tensor type of more than 2^48 elements; no GPU "
                            "holds it (a corrupted or hand-edited graph?)");
    return llvm::Error::success();
  }

  // ---- attributes ----------------------------------------------------------
  llvm::Error parseAttrValue(AttrValue &out, unsigned depth) {
    if (auto err = enter(depth))
      return err;
    switch (cur.kind) {
    case Tok::Int: {
      int64_t v;
      if (cur.text.getAsInteger(10, v))
        return error(cur.loc, "integer '" + cur.text + "' out of range");
      out.v = v;
      consume();
      return afterNumber(out);
    }
    case Tok::Float: {
      double d;
      if (!toDouble(cur.text, d))
        return error(cur.loc, "invalid number '" + cur.text + "'");
      out.v = d;
      consume();
      return afterNumber(out);
    }
    case Tok::Minus: { // "-inf"
      Location loc = cur.loc;
      consume();
      if (isIdent("inf")) {
        out.v = -HUGE_VAL;
        consume();
        return afterNumber(out);
      }
      return error(loc, "expected a number after '-'");
    }
    case Tok::String:
      if (lex.unterminated)
        return unexpected("a string");
      out.v = unescape(cur.text);
      consume();
      return llvm::Error::success();
    case Tok::Ident:
      if (cur.text == "inf" || cur.text == "nan") {
        out.v = cur.text == "inf" ? HUGE_VAL : std::nan("");
        consume();
        return afterNumber(out);
      } else if (cur.text == "True" || cur.text == "False") {
        out.v = cur.text == "True";
      } else if (cur.text == "None") {
        out.v = std::monostate();
      } else {
        out.v = cur.text.str(); // bare word: devices (cuda), dtypes
        consume();
        if (cur.kind == Tok::Colon) { // cuda:0
          consume();
          if (cur.kind != Tok::Int)
            return unexpected("a device index");
          std::get<std::string>(out.v) += ":" + cur.text.str();
          consume();
        }
        return llvm::Error::success();
      }
      consume();
      return llvm::Error::success();
    case Tok::LBracket: {
      consume();
      // torch prints an empty tensor constant as "[ CPUFloatType{0} ]".
      if (cur.kind == Tok::Ident && cur.text.ends_with("Type"))
        return parseEmptyTensor(out);
      AttrList list;
      while (cur.kind != Tok::RBracket) {
        AttrValue elem;
        if (auto err = parseAttrValue(elem, depth + 1))
          return err;
        list.push_back(std::move(elem));
        if (cur.kind == Tok::Comma)
          consume();
        else if (cur.kind != Tok::RBracket)
          return unexpected("',' or ']' in a list attribute");
      }
      consume();
      out.v = std::move(list);
      return llvm::Error::success();
    }
    case Tok::LBrace: { // tensor constant "{2}" / "{-0.5}"
      Location loc = cur.loc;
      consume();
      TensorLiteral t;
      std::string text = "{";
      double d = 0;
      bool neg = false;
      if (cur.kind == Tok::Minus) {
        neg = true;
        consume();
      }
      if (cur.kind == Tok::Int || cur.kind == Tok::Float) {
        if (!toDouble(cur.text, d))
          return error(cur.loc, "invalid number '" + cur.text + "'");
        text += cur.text.str();
        t.scalar = neg ? -d : d;
        consume();
      } else if (cur.kind == Tok::Ident &&
                 (cur.text == "inf" || cur.text == "nan")) {
        d = cur.text == "inf" ? HUGE_VAL : std::nan("");
        text += cur.text.str();
        t.scalar = neg ? -d : d;
        consume();
      } else {
        return error(loc, "expected a number inside a tensor constant");
      }
      if (auto err = expect(Tok::RBrace, "'}' closing the tensor constant"))
        return err;
      t.text = text + "}";
      out.v = std::move(t);
      return llvm::Error::success();
    }
    case Tok::Less: { // "<Tensor>"
      consume();
      if (cur.kind != Tok::Ident)
        return unexpected("a name inside '<...>'");
      TensorLiteral t;
      t.text = "<" + cur.text.str() + ">";
      consume();
      if (auto err = expect(Tok::Greater, "'>'"))
        return err;
      out.v = std::move(t);
      return llvm::Error::success();
    }
    default:
      return unexpected("an attribute value");
    }
  }

  /// Integers separated by commas up to `close`, which is consumed (the
  /// strides of a tensor type, the sizes of an empty tensor constant).
  llvm::Error parseInts(Tok close, StringRef item, StringRef separator,
                        std::vector<int64_t> &out) {
    while (cur.kind != close) {
      int64_t v;
      if (cur.kind != Tok::Int || cur.text.getAsInteger(10, v))
        return unexpected(item);
      out.push_back(v);
      consume();
      if (cur.kind == Tok::Comma)
        consume();
      else if (cur.kind != close)
        return unexpected(separator);
    }
    consume();
    return llvm::Error::success();
  }

  /// A token of a tensor's printed values: a number, `inf`, `nan`, the
  /// '-' of `-inf`, or a scale factor's '*'.
  bool isPrintedValue() const {
    return cur.kind == Tok::Int || cur.kind == Tok::Float ||
           cur.kind == Tok::Star || cur.kind == Tok::Minus ||
           (cur.kind == Tok::Ident && (cur.text == "inf" || cur.text == "nan"));
  }

  /// After a number of an attribute value (already in `out`): another
  /// value or the "[ CPUFloatType{...} ]" trailer mean a tensor constant
  /// printed with its values (torch prints up to 10 elements so, newlines
  /// made spaces: " 1.0000  2.5000 [ CPUFloatType{2} ]").
  llvm::Error afterNumber(AttrValue &out) {
    if (!isPrintedValue() && cur.kind != Tok::LBracket)
      return llvm::Error::success();
    return parsePrintedTensor(out);
  }

  /// The rest of a tensor constant printed with its values, up to its
  /// "[ XType{sizes} ]" trailer. The printed values have 4 decimals: only
  /// the type and sizes are kept, the values come from kb-export's
  /// params.json ("constants").
  llvm::Error parsePrintedTensor(AttrValue &out) {
    while (isPrintedValue())
      consume();
    if (auto err = expect(Tok::LBracket, "'[' before the tensor constant's "
                                         "type"))
      return err;
    if (cur.kind != Tok::Ident || !cur.text.ends_with("Type"))
      return unexpected("the tensor constant's type (CPUFloatType, ...)");
    return parseEmptyTensor(out, /*printed=*/true);
  }

  /// After "[": "CPUFloatType{0}" or "CUDALongType{0,3}", then "]". Only
  /// empty tensors print this way with no values before the type; with
  /// `printed`, the trailer of a tensor printed with its values.
  llvm::Error parseEmptyTensor(AttrValue &out, bool printed = false) {
    Location loc = cur.loc;
    TensorLiteral t;
    t.text = "[ " + cur.text.str() + "{";
    consume();
    if (auto err = expect(Tok::LBrace, "'{' before the tensor's sizes"))
      return err;
    std::vector<int64_t> sizes;
    if (auto err = parseInts(Tok::RBrace, "a size of the tensor constant",
                             "',' or '}' in the tensor's sizes", sizes))
      return err;
    if (auto err = expect(Tok::RBracket, "']' closing the tensor constant"))
      return err;
    if (!printed && !llvm::is_contained(sizes, 0))
      return error(loc, "a tensor constant with elements but no values "
                        "before its type");
    for (auto [i, d] : llvm::enumerate(sizes))
      t.text += (i ? "," : "") + std::to_string(d);
    t.text += "} ]";
    if (printed)
      t.printedSizes = std::move(sizes);
    else
      t.emptySizes = std::move(sizes);
    out.v = std::move(t);
    return llvm::Error::success();
  }

  static bool toDouble(StringRef text, double &d) {
    std::string s = text.str();
    char *end = nullptr;
    errno = 0;
    d = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && !s.empty();
  }

  static std::string unescape(StringRef s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        char c = s[++i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  // ---- nodes and blocks ----------------------------------------------------
  llvm::Error parseValueUses(std::vector<std::string> &names,
                             std::vector<Location> &locs) {
    if (auto err = expect(Tok::LParen, "'('"))
      return err;
    while (cur.kind != Tok::RParen) {
      if (cur.kind != Tok::Value || cur.text.empty())
        return unexpected("a value use like '%x'");
      names.push_back(cur.text.str());
      locs.push_back(cur.loc);
      consume();
      if (cur.kind == Tok::Comma)
        consume();
      else if (cur.kind != Tok::RParen)
        return unexpected("',' or ')' in an operand list");
    }
    lastLine = cur.loc.line;
    consume();
    return llvm::Error::success();
  }

  llvm::Error parseNode(Node &node, unsigned depth) {
    node.loc = cur.loc;
    // Outputs: "%a : T, %b : T = " (absent for nodes without results).
    if (cur.kind == Tok::Value) {
      while (true) {
        ValueDef def;
        if (auto err = parseValueDef(def, /*typeRequired=*/false))
          return err;
        node.outputs.push_back(std::move(def));
        if (cur.kind == Tok::Comma) {
          consume();
          continue;
        }
        break;
      }
      if (auto err = expect(Tok::Equal, "'=' after the node's outputs"))
        return err;
    }
    if (cur.kind != Tok::Ident || !cur.text.contains("::"))
      return unexpected("an operator name like 'aten::relu'");
    node.kind = cur.text.str();
    consume();
    if (cur.kind == Tok::LBracket) {
      consume();
      while (cur.kind != Tok::RBracket) {
        if (cur.kind != Tok::Ident)
          return unexpected("an attribute name");
        Attr attr;
        attr.name = cur.text.str();
        consume();
        if (auto err = expect(Tok::Equal, "'=' after the attribute name"))
          return err;
        if (auto err = parseAttrValue(attr.value, depth + 1))
          return err;
        node.attrs.push_back(std::move(attr));
        if (cur.kind == Tok::Comma)
          consume();
        else if (cur.kind != Tok::RBracket)
          return unexpected("',' or ']' in the attribute list");
      }
      consume();
    }
    if (auto err = parseValueUses(node.inputs, node.inputLocs))
      return err;
    unsigned endLine = lastLine;
    // ", scope: __module.conv" trailer: raw text up to '#' or end of line.
    if (cur.kind == Tok::Comma) {
      consume();
      if (!isIdent("scope"))
        return unexpected("'scope:' after ','");
      consume();
      if (cur.kind != Tok::Colon)
        return unexpected("':' after 'scope'");
      node.scope = lex.rawUntilCommentOrEOL().str();
      consume();
    }
    StringRef comment = lex.takeComment(endLine);
    if (!comment.empty())
      node.sourceComment = comment.str();
    // Nested blocks: "blockN(params):" ... "-> (values)".
    while (cur.kind == Tok::Ident && cur.text.starts_with("block")) {
      if (auto err = enter(depth + 1))
        return err;
      Block block;
      block.loc = cur.loc;
      consume();
      if (auto err = parseParamList(block.params))
        return err;
      if (auto err = expect(Tok::Colon, "':' after the block header"))
        return err;
      if (auto err = parseBlockBody(block, /*isGraph=*/false, depth + 1))
        return err;
      node.blocks.push_back(std::move(block));
    }
    return llvm::Error::success();
  }

  llvm::Error parseBlockBody(Block &block, bool isGraph, unsigned depth) {
    if (auto err = enter(depth))
      return err;
    lex.takeComment(0);
    while (true) {
      if (lex.badChar || lex.unterminated)
        return unexpected("a node");
      if (isGraph && isIdent("return")) {
        consume();
        if (auto err = parseValueUses(block.returns, block.returnLocs))
          return err;
        lex.takeComment(0);
        return llvm::Error::success();
      }
      if (!isGraph && cur.kind == Tok::Arrow) {
        consume();
        if (auto err = parseValueUses(block.returns, block.returnLocs))
          return err;
        lex.takeComment(0);
        return llvm::Error::success();
      }
      if (cur.kind == Tok::Eof)
        return unexpected(isGraph ? "'return'" : "'->' ending the block");
      Node node;
      if (auto err = parseNode(node, depth))
        return err;
      block.nodes.push_back(std::move(node));
    }
  }

  llvm::SourceMgr srcMgr;
  Lexer lex;
  Token cur;
  unsigned lastLine = 0; // line of the last ')' closing an operand list
};

} // namespace

const Attr *Node::findAttr(const std::string &attrName) const {
  for (const Attr &a : attrs)
    if (a.name == attrName)
      return &a;
  return nullptr;
}

std::string Type::str() const {
  std::string s;
  switch (kind) {
  case Kind::Tensor:
    s = name.empty() ? "Tensor" : name;
    if (hasSizes) {
      s += "(";
      for (size_t i = 0; i < sizes.size(); ++i)
        s += (i ? ", " : "") +
             (sizes[i] ? std::to_string(*sizes[i]) : std::string("*"));
      s += ")";
    }
    return s;
  case Kind::Int: return "int";
  case Kind::Float: return "float";
  case Kind::Bool: return "bool";
  case Kind::Str: return "str";
  case Kind::None: return "NoneType";
  case Kind::Device: return "Device";
  case Kind::Number: return "number";
  case Kind::Scalar: return "Scalar";
  case Kind::List: return (elems.empty() ? "?" : elems[0].str()) + "[]";
  case Kind::Optional: return (elems.empty() ? "?" : elems[0].str()) + "?";
  case Kind::Tuple:
  case Kind::Dict:
    s = kind == Kind::Tuple ? "(" : "Dict(";
    for (size_t i = 0; i < elems.size(); ++i)
      s += (i ? ", " : "") + elems[i].str();
    return s + ")";
  case Kind::Class:
  case Kind::Other:
    return name;
  }
  return s;
}

llvm::Expected<Graph> kb::ts::parseGraph(StringRef text, StringRef bufferName) {
  return Parser(text, bufferName).parse();
}
