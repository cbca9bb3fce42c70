//===- TorchScriptImporter.cpp - TorchScript IR -> kb dialect -------------===//
//
// Every well-formed graph imports: ops the op-semantics table does not know
// become kb.opaque, nested prim::If/prim::Loop blocks become regions of an
// opaque op. Module attribute chains (prim::GetAttr) collapse into named
// kb.parameter values.
//
//===----------------------------------------------------------------------===//

#include "kb/Import/TorchScriptImporter.h"
#include "kb/IR/KbDialect.h"
#include "kb/Support/InputFile.h"
#include "kb/Support/ShapeText.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace kb;
using llvm::StringRef;

namespace {

Type elementTypeFor(MLIRContext *ctx, StringRef scalarType) {
  Builder b(ctx);
  return llvm::StringSwitch<Type>(scalarType)
      .Cases({"Float", "float32"}, b.getF32Type())
      .Cases({"Double", "float64"}, b.getF64Type())
      .Cases({"Half", "float16"}, b.getF16Type())
      .Cases({"BFloat16", "bfloat16"}, b.getBF16Type())
      .Cases({"Long", "int64"}, b.getI64Type())
      .Cases({"Int", "int32"}, b.getI32Type())
      .Cases({"Short", "int16"}, b.getI16Type())
      .Cases({"Char", "int8"}, b.getI8Type())
      .Cases({"Byte", "uint8"}, b.getIntegerType(8, /*isSigned=*/false))
      .Cases({"Bool", "bool"}, b.getI1Type())
      .Default(UnknownType::get(ctx));
}

RankedTensorType rankedTensor(MLIRContext *ctx, ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> strides, Type elem) {
  // Contiguous strides are implied; only other layouts (channels-last,
  // transposed views) are kept, as the tensor encoding.
  Attribute encoding;
  if (!strides.empty()) {
    int64_t expect = 1;
    bool contiguous = true;
    for (int i = (int)shape.size() - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != expect)
        contiguous = false;
      if (!ShapedType::isDynamic(shape[i]))
        expect *= shape[i];
    }
    // An ArrayAttr, not a DenseI64ArrayAttr: MLIR's parser cannot read an
    // `array<...>` tensor encoding back, `[...]` round-trips.
    if (!contiguous)
      encoding = Builder(ctx).getI64ArrayAttr(strides);
  }
  return RankedTensorType::get(shape, elem, encoding);
}

class Importer {
public:
  Importer(MLIRContext &ctx, const ts::Graph &graph, const ImportOptions &opts)
      : ctx(ctx), graph(graph), opts(opts), builder(&ctx) {}

  llvm::Expected<OwningOpRef<ModuleOp>> run() {
    Location top = loc(graph.body.loc);
    OwningOpRef<ModuleOp> module = ModuleOp::create(top);
    builder.setInsertionPointToEnd(module->getBody());

    SmallVector<Type> argTypes;
    SmallVector<const ts::ValueDef *> argDefs;
    for (const ts::ValueDef &p : graph.body.params) {
      if (p.type.kind == ts::Type::Kind::Class) {
        objects[p.name] = ""; // the root module
        continue;
      }
      argTypes.push_back(convertType(p.type));
      argDefs.push_back(&p);
    }
    auto func = func::FuncOp::create(builder, top, "forward",
                                     builder.getFunctionType(argTypes, {}));
    Block *entry = func.addEntryBlock();
    for (auto [def, arg] : llvm::zip(argDefs, entry->getArguments())) {
      arg.setLoc(loc(def->loc));
      if (auto err = define(def->name, arg, def->loc))
        return std::move(err);
    }
    builder.setInsertionPointToEnd(entry);
    for (const ts::Node &node : graph.body.nodes)
      if (auto err = importNode(node))
        return std::move(err);

    SmallVector<Value> results;
    for (auto [name, l] : llvm::zip(graph.body.returns, graph.body.returnLocs)) {
      // A returned tuple is flattened into multiple results.
      auto tup = tuples.find(name);
      if (tup != tuples.end()) {
        results.append(tup->second.begin(), tup->second.end());
        continue;
      }
      auto v = lookup(name, l);
      if (!v)
        return v.takeError();
      results.push_back(*v);
    }
    func::ReturnOp::create(builder, top, results);
    // Tuples only built to be returned were flattened above; drop them.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
      if (auto opaque = dyn_cast<OpaqueOp>(op);
          opaque && opaque.getName() == "prim::TupleConstruct" &&
          opaque->use_empty())
        opaque->erase();
    func.setFunctionType(
        builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
    return std::move(module);
  }

private:
  Location loc(ts::Location l) {
    return FileLineColLoc::get(&ctx, graph.bufferName, l.line, l.col);
  }

  Location nodeLoc(const ts::Node &node) {
    SmallVector<Location> parts{loc(node.loc)};
    if (!node.scope.empty())
      parts.push_back(NameLoc::get(builder.getStringAttr(node.scope)));
    // "# /path/model.py:12:0": the Python line the op came from.
    StringRef c = node.sourceComment;
    auto [rest, col] = c.rsplit(':');
    auto [file, line] = rest.rsplit(':');
    unsigned lineNo, colNo;
    if (!file.empty() && !line.getAsInteger(10, lineNo) &&
        !col.getAsInteger(10, colNo))
      parts.push_back(FileLineColLoc::get(&ctx, file, lineNo, colNo));
    return parts.size() == 1 ? parts[0] : FusedLoc::get(&ctx, parts);
  }

  llvm::Error error(ts::Location l, const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   graph.bufferName + ":" +
                                       llvm::Twine(l.line) + ":" +
                                       llvm::Twine(l.col) + ": error: " + msg);
  }

  /// An elementwise op's tensor operands broadcast (NumPy's rules, as
  /// ATen's) to its result's static shape. A graph that says otherwise
  /// (mul of Float(4) and Float(7) giving Float(4)) was edited or corrupted,
  /// and a kernel generated from it would read past its operands.
  llvm::Error checkBroadcast(const OpInfo &info, StringRef kind,
                             ArrayRef<Value> operands, ArrayRef<Type> results,
                             ts::Location l) {
    if (info.kind != OpKind::Elementwise || results.size() != 1)
      return llvm::Error::success();
    auto out = dyn_cast<RankedTensorType>(results[0]);
    if (!out || !out.hasStaticShape())
      return llvm::Error::success();
    ArrayRef<int64_t> to = out.getShape();
    for (auto [arg, v] : llvm::zip(info.args, operands)) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (arg.type != ArgType::Tensor || !t || !t.hasStaticShape())
        continue;
      ArrayRef<int64_t> from = t.getShape();
      bool fits = from.size() <= to.size();
      for (size_t i = 0; fits && i < from.size(); ++i) {
        int64_t d = from[from.size() - 1 - i];
        fits = d == 1 || d == to[to.size() - 1 - i];
      }
      if (!fits)
        return error(l, kind + " operand '" + arg.name + "' of shape " +
                            shapeText(from) +
                            " does not broadcast to its result's shape " +
                            shapeText(to) +
                            "; the graph is inconsistent (edited or "
                            "corrupted): export it again");
    }
    return llvm::Error::success();
  }

  llvm::Error define(const std::string &name, Value v, ts::Location l) {
    if (!values.try_emplace(name, v).second)
      return error(l, "value '%" + name + "' is defined twice");
    return llvm::Error::success();
  }

  llvm::Expected<Value> lookup(const std::string &name, ts::Location l) {
    auto it = values.find(name);
    if (it != values.end())
      return it->second;
    if (objects.count(name))
      return error(l, "module value '%" + name +
                          "' is used as an operand; only its attributes "
                          "(prim::GetAttr) can be imported");
    return error(l, "use of undefined value '%" + name + "'");
  }

  /// The result of JIT autocast's casts, which traces under torch.autocast
  /// print untyped (torch 2.x: `%169 : Tensor =
  /// aten::_autocast_to_full_precision(%x, %cuda_enabled, %cpu_enabled)`):
  /// the operand's shape in the type ATen's definitions give. To full
  /// precision: a float16/bfloat16 tensor becomes float32; to reduced: a
  /// float32 tensor becomes `cuda_dtype`/`cpu_dtype`; each only where its
  /// flag enables autocast (the graph carries no device: a trace runs on
  /// one, whose flag is the one set), else the operand unchanged. `given`
  /// when the printed type says more, or the operands are not constants.
  Type autocastResult(StringRef kind, ArrayRef<Value> operands, Type given) {
    bool full = kind == "aten::_autocast_to_full_precision";
    bool reduced = kind == "aten::_autocast_to_reduced_precision";
    if ((!full && !reduced) || !isa<UnrankedTensorType>(given) ||
        operands.size() != (full ? 3u : 5u))
      return given;
    auto self = dyn_cast<RankedTensorType>(operands[0].getType());
    if (!self)
      return given;
    auto flag = [](Value v) -> std::optional<bool> {
      if (auto c = v.getDefiningOp<ConstantOp>())
        if (auto b = dyn_cast<BoolAttr>(c.getValue()))
          return b.getValue();
      return std::nullopt;
    };
    std::optional<bool> cuda = flag(operands[1]), cpu = flag(operands[2]);
    if (!cuda || !cpu)
      return given;
    Type elem = self.getElementType(), to = elem;
    if (*cuda || *cpu) {
      if (full && (elem.isF16() || elem.isBF16()))
        to = builder.getF32Type();
      if (reduced && elem.isF32()) {
        auto c = operands[*cuda ? 3 : 4].getDefiningOp<ConstantOp>();
        auto code = c ? dyn_cast<IntegerAttr>(c.getValue()) : IntegerAttr();
        // c10::ScalarType: 5 Half, 15 BFloat16.
        if (!code || (code.getInt() != 5 && code.getInt() != 15))
          return given;
        to = code.getInt() == 5 ? Type(builder.getF16Type())
                                : Type(builder.getBF16Type());
      }
    }
    return RankedTensorType::get(self.getShape(), to, self.getEncoding());
  }

  /// A pointwise op over a value autocastResult retyped: the trace recorded
  /// its result as eager computed it (a bfloat16 GELU), but the graph casts
  /// its operand first (`_autocast_to_full_precision`), so running the
  /// graph gives the promoted type of its tensor operands (float32 when one
  /// is float32). The graph's semantics are the ones the runtime, kb-verify
  /// and the region kernels share.
  Type afterAutocast(const OpInfo &info, ArrayRef<Value> operands, Type given) {
    auto ranked = dyn_cast<RankedTensorType>(given);
    if (!ranked ||
        (info.kind != OpKind::Elementwise && info.kind != OpKind::Broadcast) ||
        info.style == OpStyle::Cast ||
        !llvm::any_of(operands, [&](Value v) { return retyped.count(v); }))
      return given;
    bool f32 = llvm::any_of(operands, [](Value v) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      return t && t.getElementType().isF32();
    });
    Type elem = ranked.getElementType();
    if (!f32 || !(elem.isF16() || elem.isBF16()))
      return given;
    return RankedTensorType::get(ranked.getShape(), Builder(&ctx).getF32Type(),
                                 ranked.getEncoding());
  }

  Type convertType(const ts::Type &t) {
    Builder &b = builder;
    using K = ts::Type::Kind;
    switch (t.kind) {
    case K::Tensor: {
      Type elem = elementTypeFor(&ctx, t.name);
      if (!t.hasSizes)
        return UnrankedTensorType::get(elem);
      SmallVector<int64_t> shape;
      for (auto s : t.sizes)
        shape.push_back(s ? *s : ShapedType::kDynamic);
      return rankedTensor(&ctx, shape, t.strides, elem);
    }
    case K::Int: return b.getI64Type();
    case K::Float: return b.getF64Type();
    case K::Bool: return b.getI1Type();
    case K::Str: return StrType::get(&ctx);
    case K::None: return b.getNoneType();
    case K::Device: return DeviceType::get(&ctx);
    case K::Number:
    case K::Scalar: return ScalarType::get(&ctx);
    case K::List:
      return ListType::get(&ctx, t.elems.empty() ? Type(UnknownType::get(&ctx))
                                           : convertType(t.elems[0]));
    case K::Optional:
      return OptionalType::get(&ctx, t.elems.empty() ? Type(UnknownType::get(&ctx))
                                               : convertType(t.elems[0]));
    case K::Tuple: {
      SmallVector<Type> elems;
      for (const ts::Type &e : t.elems)
        elems.push_back(convertType(e));
      return TupleType::get(&ctx, elems);
    }
    case K::Class: return ObjectType::get(&ctx, t.name);
    case K::Dict:
    case K::Other: return OtherType::get(&ctx, t.str());
    }
    return OtherType::get(&ctx, t.str());
  }

  Attribute convertAttr(const ts::AttrValue &a, Type resultType) {
    Builder &b = builder;
    if (auto *i = std::get_if<int64_t>(&a.v)) {
      if (resultType && resultType.isInteger(1))
        return b.getBoolAttr(*i != 0);
      if (resultType && resultType.isF64())
        return b.getF64FloatAttr(static_cast<double>(*i));
      return b.getI64IntegerAttr(*i);
    }
    if (auto *d = std::get_if<double>(&a.v))
      return b.getF64FloatAttr(*d);
    if (auto *bv = std::get_if<bool>(&a.v))
      return b.getBoolAttr(*bv);
    if (auto *s = std::get_if<std::string>(&a.v))
      return b.getStringAttr(*s);
    if (auto *list = std::get_if<ts::AttrList>(&a.v)) {
      Type elem;
      if (auto lt = dyn_cast_or_null<ListType>(resultType))
        elem = lt.getElementType();
      SmallVector<Attribute> elems;
      for (const ts::AttrValue &e : *list)
        elems.push_back(convertAttr(e, elem));
      return b.getArrayAttr(elems);
    }
    if (auto *t = std::get_if<ts::TensorLiteral>(&a.v)) {
      if (t->scalar)
        return b.getF64FloatAttr(*t->scalar);
      return b.getStringAttr(t->text);
    }
    return b.getUnitAttr(); // None
  }

  /// The exact value of tensor constant %name from params.json: a 0-d one
  /// as the number (the text has 6 digits), others as dense elements (the
  /// text has 4 decimals, or `<Tensor>`). Null without a record, or where
  /// the record's shape or dtype disagree with the printed type.
  Attribute exactConstant(StringRef name, Type type) {
    auto it = opts.constants.find(name.str());
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (it == opts.constants.end() || !ranked || !ranked.hasStaticShape() ||
        ranked.getShape() != ArrayRef<int64_t>(it->second.shape) ||
        elementTypeFor(&ctx, it->second.dtype) != ranked.getElementType())
      return {};
    const ConstantData &c = it->second;
    Type elem = ranked.getElementType();
    if (ranked.getRank() == 0)
      return builder.getF64FloatAttr(c.values.front());
    SmallVector<Attribute> elems;
    elems.reserve(c.values.size());
    for (double v : c.values) {
      if (auto f = dyn_cast<FloatType>(elem))
        elems.push_back(builder.getFloatAttr(f, v));
      else if (elem.isInteger(1))
        elems.push_back(builder.getBoolAttr(v != 0));
      else if (auto i = dyn_cast<IntegerType>(elem))
        elems.push_back(builder.getIntegerAttr(i, (int64_t)v));
      else
        return {};
    }
    return DenseElementsAttr::get(ranked, elems);
  }

  static ValueClass classify(Type t) {
    if (isa<TensorType>(t))
      return ValueClass::Tensor;
    if (t.isInteger(1))
      return ValueClass::Bool;
    if (t.isInteger(64))
      return ValueClass::Int;
    if (t.isF64())
      return ValueClass::Float;
    if (isa<ScalarType>(t))
      return ValueClass::Number;
    if (isa<NoneType>(t))
      return ValueClass::None;
    if (isa<StrType>(t))
      return ValueClass::Str;
    if (isa<DeviceType>(t))
      return ValueClass::Device;
    if (auto opt = dyn_cast<OptionalType>(t))
      return classify(opt.getElementType());
    if (auto list = dyn_cast<ListType>(t)) {
      Type e = list.getElementType();
      if (isa<TensorType>(e))
        return ValueClass::TensorList;
      if (e.isInteger(64))
        return ValueClass::IntList;
      if (e.isF64())
        return ValueClass::FloatList;
      return ValueClass::List;
    }
    return ValueClass::Other;
  }

  Type parameterType(const std::string &path, const ts::Type &printed) {
    if (printed.kind == ts::Type::Kind::Tensor && !printed.hasSizes) {
      auto it = opts.params.find(path);
      if (it != opts.params.end())
        return RankedTensorType::get(it->second.shape,
                                     elementTypeFor(&ctx, it->second.dtype));
    }
    return convertType(printed);
  }

  llvm::Error importNode(const ts::Node &node) {
    Location l = nodeLoc(node);
    StringRef kind = node.kind;

    if (kind == "prim::GetAttr") {
      const ts::Attr *nameAttr = node.findAttr("name");
      if (!nameAttr || !nameAttr->value.isString() || node.inputs.size() != 1 ||
          node.outputs.size() != 1)
        return error(node.loc, "prim::GetAttr needs a name attribute, one "
                               "input and one output");
      auto obj = objects.find(node.inputs[0]);
      if (obj == objects.end())
        return error(node.inputLocs[0], "prim::GetAttr on '%" +
                                            node.inputs[0] +
                                            "', which is not a module");
      std::string path = obj->second.empty()
                             ? std::get<std::string>(nameAttr->value.v)
                             : obj->second + "." +
                                   std::get<std::string>(nameAttr->value.v);
      if (!opts.modulePrefix.empty() &&
          StringRef(path).starts_with(opts.modulePrefix))
        path = path.substr(opts.modulePrefix.size());
      const ts::ValueDef &out = node.outputs[0];
      if (out.type.kind == ts::Type::Kind::Class) {
        objects[out.name] = path;
        return llvm::Error::success();
      }
      auto p = ParameterOp::create(builder, l, parameterType(path, out.type),
                                   builder.getStringAttr(path));
      return define(out.name, p, out.loc);
    }

    if (kind == "prim::Constant") {
      if (node.outputs.size() != 1)
        return error(node.loc, "prim::Constant must have exactly one output");
      const ts::ValueDef &out = node.outputs[0];
      const ts::Attr *value = node.findAttr("value");
      Type type = value ? convertType(out.type) : builder.getNoneType();
      if (!value && out.type.kind != ts::Type::Kind::None &&
          out.type.kind != ts::Type::Kind::Tensor)
        type = convertType(out.type);
      Attribute attr =
          value ? convertAttr(value->value, type) : builder.getUnitAttr();
      if (value && std::holds_alternative<ts::TensorLiteral>(value->value.v))
        if (Attribute exact = exactConstant(out.name, type))
          attr = exact;
      auto c = ConstantOp::create(builder, l, type, attr);
      return define(out.name, c, out.loc);
    }

    SmallVector<Value> operands;
    for (auto [name, il] : llvm::zip(node.inputs, node.inputLocs)) {
      auto v = lookup(name, il);
      if (!v)
        return v.takeError();
      operands.push_back(*v);
    }
    SmallVector<Type> resultTypes;
    for (const ts::ValueDef &out : node.outputs)
      resultTypes.push_back(convertType(out.type));
    // Whether the result's type is not the traced one: an autocast cast
    // that casts, or a pointwise op over such a value (afterAutocast).
    bool retypes = false;
    if (resultTypes.size() == 1) {
      Type t = autocastResult(kind, operands, resultTypes[0]);
      retypes = t != resultTypes[0] &&
                cast<ShapedType>(t).getElementType() !=
                    cast<ShapedType>(operands[0].getType()).getElementType();
      resultTypes[0] = t;
    }

    if (kind == "prim::ListConstruct" && node.outputs.size() == 1) {
      Type t = resultTypes[0];
      if (!isa<ListType>(t))
        t = ListType::get(&ctx, operands.empty() ? Type(UnknownType::get(&ctx))
                                           : operands[0].getType());
      auto list = ListOp::create(builder, l, t, operands);
      return define(node.outputs[0].name, list, node.outputs[0].loc);
    }
    if (kind == "prim::TupleConstruct" && node.outputs.size() == 1)
      tuples[node.outputs[0].name] = operands;
    if ((kind == "prim::TupleUnpack" || kind == "prim::ListUnpack") &&
        operands.size() == 1) {
      // Unpacking a tuple or list built in this graph forwards its elements.
      SmallVector<Value> elems;
      auto tup = tuples.find(node.inputs[0]);
      if (tup != tuples.end())
        elems = tup->second;
      else if (auto list = operands[0].getDefiningOp<ListOp>())
        elems.assign(list.getElements().begin(), list.getElements().end());
      if (!elems.empty() && elems.size() == node.outputs.size()) {
        for (auto [out, v] : llvm::zip(node.outputs, elems))
          if (auto err = define(out.name, v, out.loc))
            return err;
        return llvm::Error::success();
      }
    }

    Operation *op = nullptr;
    if (kind.starts_with("aten::") && node.blocks.empty()) {
      auto [base, inplace] = stripInPlace(kind);
      SmallVector<ValueClass> classes;
      for (Value v : operands)
        classes.push_back(classify(v.getType()));
      if (const OpInfo *info = resolveOverload(base, classes)) {
        if (resultTypes.size() == 1) {
          Type t = afterAutocast(*info, operands, resultTypes[0]);
          retypes |= t != resultTypes[0];
          resultTypes[0] = t;
        }
        if (auto err =
                checkBroadcast(*info, kind, operands, resultTypes, node.loc))
          return err;
        auto aten = AtenOp::create(builder, l, resultTypes,
                                   builder.getStringAttr(info->name),
                                   builder.getStringAttr(info->overload),
                                   inplace ? builder.getUnitAttr() : nullptr,
                                   /*kind=*/nullptr, operands);
        op = aten;
      }
    }
    if (!op) {
      auto opaque =
          OpaqueOp::create(builder, l, resultTypes, builder.getStringAttr(kind),
                           operands, node.blocks.size());
      for (auto [block, region] : llvm::zip(node.blocks, opaque.getBlocks()))
        if (auto err = importBlock(block, region))
          return err;
      op = opaque;
    }
    if (retypes)
      retyped.insert(op->getResult(0));
    for (auto [out, res] : llvm::zip(node.outputs, op->getResults()))
      if (auto err = define(out.name, res, out.loc))
        return err;
    return llvm::Error::success();
  }

  llvm::Error importBlock(const ts::Block &block, Region &region) {
    OpBuilder::InsertionGuard guard(builder);
    Block *b = builder.createBlock(&region);
    for (const ts::ValueDef &p : block.params) {
      Value arg = b->addArgument(convertType(p.type), loc(p.loc));
      if (auto err = define(p.name, arg, p.loc))
        return err;
    }
    for (const ts::Node &node : block.nodes)
      if (auto err = importNode(node))
        return err;
    SmallVector<Value> results;
    for (auto [name, l] : llvm::zip(block.returns, block.returnLocs)) {
      auto v = lookup(name, l);
      if (!v)
        return v.takeError();
      results.push_back(*v);
    }
    YieldOp::create(builder, loc(block.loc), results);
    return llvm::Error::success();
  }

  MLIRContext &ctx;
  const ts::Graph &graph;
  const ImportOptions &opts;
  OpBuilder builder;
  llvm::StringMap<Value> values;
  /// Values whose type differs from what the trace recorded for them: JIT
  /// autocast's casts that cast, and the pointwise ops over them.
  llvm::DenseSet<Value> retyped;
  llvm::StringMap<std::string> objects; // value name -> module path
  llvm::StringMap<SmallVector<Value>> tuples;
};

} // namespace

llvm::Expected<ImportOptions> kb::loadParamsJson(StringRef path) {
  auto buf = readInputFile(path);
  if (!buf)
    return buf.takeError();
  auto json = llvm::json::parse((*buf)->getBuffer());
  if (!json)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        path + ": error: invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": error: expected a JSON object");
  return paramsFromJson(*root, path);
}

std::string kb::defaultParamsPath(StringRef graphPath) {
  StringRef stem = graphPath.ends_with(".graph.txt")
                       ? graphPath.drop_back(StringRef(".graph.txt").size())
                       : graphPath;
  return stem.str() + ".params.json";
}

llvm::Expected<ImportOptions>
kb::paramsFromJson(const llvm::json::Object &params, StringRef path) {
  const llvm::json::Object *root = &params;
  auto invalid = [&](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": error: " + what +
                                       "; re-export with kb-export");
  };
  // A version this reader does not know may mean fields it would misread.
  if (const llvm::json::Value *v = root->get("schema_version")) {
    auto n = v->getAsInteger();
    if (!n || *n != 1)
      return invalid("'schema_version' is not 1, the version this "
                     "kb-rewrite reads");
  }
  // The runtime guard is keyed on the mode: a null is not "training".
  if (const llvm::json::Value *v = root->get("training");
      v && !v->getAsBoolean())
    return invalid("'training' is not true or false");
  ImportOptions opts;
  opts.modulePrefix = root->getString("module_prefix").value_or("").str();
  for (StringRef section : {"parameters", "buffers"}) {
    const llvm::json::Array *arr = root->getArray(section);
    if (!arr)
      continue;
    for (const llvm::json::Value &v : *arr) {
      const llvm::json::Object *o = v.getAsObject();
      auto name = o ? o->getString("name") : std::nullopt;
      const llvm::json::Array *shape = o ? o->getArray("shape") : nullptr;
      if (!name || !shape)
        return invalid("every entry of '" + section +
                       "' needs 'name' and 'shape'");
      ParamInfo info;
      for (const llvm::json::Value &d : *shape) {
        // Sizes become the parameter's static type where the graph prints
        // none: a guess (or a negative size) would be a wrong type.
        auto size = d.getAsInteger();
        if (!size || *size < 0)
          return invalid("'" + section + "' entry '" + *name +
                         "' has a size that is not a non-negative integer");
        info.shape.push_back(*size);
      }
      info.dtype = o->getString("dtype").value_or("float32").str();
      opts.params[name->str()] = std::move(info);
    }
  }
  if (const llvm::json::Array *arr = root->getArray("constants")) {
    for (const llvm::json::Value &v : *arr) {
      const llvm::json::Object *o = v.getAsObject();
      auto name = o ? o->getString("value") : std::nullopt;
      const llvm::json::Array *shape = o ? o->getArray("shape") : nullptr;
      const llvm::json::Array *values = o ? o->getArray("values") : nullptr;
      auto bad = [&](const llvm::Twine &what) {
        return invalid("'constants': " + what);
      };
      if (!name || !shape || !values)
        return bad("every entry needs 'value', 'shape' and 'values'");
      ConstantData c;
      c.dtype = o->getString("dtype").value_or("float32").str();
      int64_t n = 1;
      for (const llvm::json::Value &d : *shape) {
        auto size = d.getAsInteger();
        if (!size || *size < 0)
          return bad("constant %" + *name +
                     " has a size that is not a "
                     "non-negative integer");
        c.shape.push_back(*size);
        n *= *size;
      }
      for (const llvm::json::Value &x : *values) {
        if (auto b = x.getAsBoolean())
          c.values.push_back(*b ? 1.0 : 0.0);
        else if (auto d = x.getAsNumber())
          c.values.push_back(*d);
        else if (auto s = x.getAsString();
                 s && (*s == "nan" || *s == "inf" || *s == "-inf"))
          c.values.push_back(*s == "nan"   ? std::nan("")
                             : *s == "inf" ? HUGE_VAL
                                           : -HUGE_VAL);
        else
          return bad("constant %" + *name +
                     " holds a value that is not a "
                     "number");
      }
      if ((int64_t)c.values.size() != n)
        return bad("constant %" + *name + " has " +
                   llvm::Twine(c.values.size()) + " values for " +
                   llvm::Twine(n) + " elements");
      opts.constants[name->str()] = std::move(c);
    }
  }
  return opts;
}

llvm::Expected<OwningOpRef<ModuleOp>>
kb::importGraph(MLIRContext &ctx, const ts::Graph &graph,
                const ImportOptions &options) {
  ctx.loadDialect<KbDialect, func::FuncDialect>();
  return Importer(ctx, graph, options).run();
}

llvm::Expected<ts::Graph> kb::readGraphFile(StringRef path) {
  auto buf = readInputFile(path, /*allowStdin=*/true);
  if (!buf)
    return buf.takeError(); // keeps the OS's error code: exit 1, not 2
  return ts::parseGraph((*buf)->getBuffer(), path);
}

llvm::Expected<OwningOpRef<ModuleOp>>
kb::importGraphFile(MLIRContext &ctx, StringRef path, StringRef paramsPath) {
  auto graph = readGraphFile(path);
  if (!graph)
    return graph.takeError();
  ImportOptions opts;
  std::string params = paramsPath.str();
  if (params.empty() && path.ends_with(".graph.txt")) {
    std::string sibling = defaultParamsPath(path);
    if (llvm::sys::fs::exists(sibling))
      params = sibling;
  }
  if (!params.empty()) {
    auto loaded = loadParamsJson(params);
    if (!loaded)
      return loaded.takeError();
    opts = std::move(*loaded);
  }
  return importGraph(ctx, *graph, opts);
}
