//===- RegionEmitter.cpp - valueAt: the C++ of a region value at an index ===//

#include "RegionEmitter.h"
#include "kb/CodeGen/IndexMath.h"
#include "kb/CodeGen/OpExpression.h"
#include "kb/CodeGen/Prelude.h"
#include "kb/Verify/Checks.h"

#include "kb/Transforms/OpUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

std::optional<Storage> RegionEmitter::storageOf(Type t) const {
  std::optional<Storage> s = floatStorage(t);
  if (s && *s != Storage::F32 && !halfStorage)
    return std::nullopt;
  return s;
}

RegionEmitter::RegionEmitter(KernelOp k) : kernel(k) {
  for (Value v : k.getBody().front().getTerminator()->getOperands())
    outputStrides.push_back(tracedStrides(v));
  narrow = true;
  k.getBody().walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        narrow &= t.hasStaticShape() && t.getNumElements() < (int64_t(1) << 31);
  });
  for (Value a : k.getBody().getArguments())
    if (auto t = dyn_cast<RankedTensorType>(a.getType())) {
      narrow &= t.hasStaticShape() && t.getNumElements() < (int64_t(1) << 31);
      // A strided argument's addresses reach its span, not its size.
      if (SmallVector<int64_t> s = tracedStrides(a); !s.empty() && narrow)
        narrow &=
            verify::stridedSpan(t.getShape().vec(), {s.begin(), s.end()}) <
            (int64_t(1) << 31);
    }
  k.getBody().walk([&](AtenOp op) {
    const OpInfo *info = op.getInfo();
    if (!info || info->indexMap != IndexMap::Permute ||
        !isa<BlockArgument>(op.getArgs()[0]) || !isF32Tensor(op.getType(0)) ||
        !isContiguousArg(op.getArgs()[0]))
      return;
    auto dims = getConstantIntList(op.getArgs()[1]);
    int64_t r = shapeOf(op.getResult(0)).size();
    if (!dims || r < 3 || (int64_t)dims->size() != r)
      return;
    // [N, spatial..., C] -> [N, C, spatial...]
    bool toFirst = (*dims)[0] == 0 && (*dims)[1] == r - 1;
    for (int64_t d = 2; d < r; ++d)
      toFirst &= (*dims)[d] == d - 1;
    if (toFirst && !channelsLastRead)
      channelsLastView = op.getResult(0);
    channelsLastRead |= toFirst;
  });
}

void RegionEmitter::takeOptions(const EmitOptions &options) {
  fastMath = options.fastMath;
  splitChunks = options.splitChunks;
  splitBlock = options.splitBlock;
  splitPerSM = options.splitPerSM;
  splitUnroll = options.splitUnroll;
  splitQuad = options.splitQuad;
  splitAhead = options.splitAhead;
  splitFoldUnroll = options.splitFoldUnroll;
  splitFlat = options.splitFlat;
  splitFlatOutputs = options.splitFlatOutputs;
  splitCombineOnceMin = options.splitCombineOnceMin;
  splitSerialCombine = options.splitSerialCombine;
  splitItemRegisters = options.splitItemRegisters;
  splitRowVectors = options.splitRowVectors;
  perOutputUnroll = options.outputsPerThread;
  pointwiseVectors = options.pointwiseVectors;
  rowBlock = options.rowBlock;
  registerRowMax = options.registerRowMax;
  threadRowMax = options.threadRowMax;
  divisionStats = options.divisionStats;
  threadShortRows = options.threadShortRows;
  laneShortRows = options.laneShortRows;
  stageTransposedStores = options.stageTransposedStores;
  tileTransposes = options.tileTransposes;
  splitBarrierStore = options.splitBarrierStore;
  sharedRowMax = options.sharedRowMax;
  atenOrderNorms = options.atenOrderNorms;
  groupUnroll = options.groupUnroll;
  vectorLanes = options.vectorLanes;
  momentsBatch = options.momentsBatch;
}

std::string RegionEmitter::outputAt(size_t k, llvm::StringRef idx) const {
  std::string name = "out" + std::to_string(k);
  if (k >= outputStrides.size() || outputStrides[k].empty())
    return name + "[" + idx.str() + "]";
  Value v = kernel.getBody().front().getTerminator()->getOperand(k);
  return name + "[" + stridedOffset(shapeOf(v), outputStrides[k], idx, narrow) +
         "]";
}

std::string RegionEmitter::store(size_t k, llvm::StringRef idx,
                                 llvm::StringRef value) const {
  if ((int)k == stagedOut && idx == stagedOutIdx)
    return stagedOutAt + " = " + value.str() + ";";
  Value v = kernel.getBody().front().getTerminator()->getOperand(k);
  return outputAt(k, idx) + " = " + toStorage(storedAs(v), value) + ";";
}

std::string RegionEmitter::storeFour(size_t k, llvm::StringRef idx,
                                     llvm::StringRef a) const {
  auto elem = [&](int j) { return a.str() + "[" + std::to_string(j) + "]"; };
  Value v = kernel.getBody().front().getTerminator()->getOperand(k);
  if (storedAs(v) != Storage::F32) {
    std::string s;
    for (int j = 0; j < 4; ++j)
      s += (j ? " " : "") +
           store(k, "(" + idx.str() + ") + " + std::to_string(j), elem(j));
    return s;
  }
  if (k >= outputStrides.size() || outputStrides[k].empty())
    return "*reinterpret_cast<float4*>(out" + std::to_string(k) + " + " +
           idx.str() + ") = make_float4(" + elem(0) + ", " + elem(1) + ", " +
           elem(2) + ", " + elem(3) + ");";
  std::string s;
  for (int j = 0; j < 4; ++j)
    s += (j ? " " : "") +
         outputAt(k, "(" + idx.str() + ") + " + std::to_string(j)) + " = " +
         elem(j) + ";";
  return s;
}

llvm::Error RegionEmitter::unsupported(const llvm::Twine &why) const {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 kernel.getSymName() + ": " + why);
}

std::string RegionEmitter::provenance() const {
  return kernel.getAnchor() ? "the epilogue of " + kernel.getAnchor()->str()
                            : std::string("an anchorless chain");
}

std::optional<StageInfo> RegionEmitter::blockStage(AtenOp aten) {
  if (!cooperative || aten == serialFinal ||
      !isSerialRecipe(aten.getInfo()->recipe))
    return std::nullopt;
  auto s = analyzeStage(kernel, aten);
  if (!s) { // the serial form below reports it
    llvm::consumeError(s.takeError());
    return std::nullopt;
  }
  if (s->reduced.empty() && !blockWidePool(*s))
    return std::nullopt;
  return std::move(*s);
}

llvm::Expected<std::string> RegionEmitter::valueAt(Value v, llvm::StringRef idx,
                                                   llvm::raw_ostream &os,
                                                   llvm::StringRef indent) {
  auto key = std::make_pair(v.getAsOpaquePointer(), idx.str());
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  // float32 values, the bool results of comparisons feeding where, and the
  // int64 index an argmax / argmin stage yields (KernelEmitter checks that
  // nothing in the region reads it).
  bool isBool = isBoolTensor(v.getType());
  std::optional<Storage> storage = storageOf(v.getType());
  if (!storage && !isBool && !isArgIndex(v))
    return unsupported(halfStorage || !isHalfTensor(v.getType())
                           ? "a value that is not a static float32 tensor"
                           : "a float16 or bfloat16 value outside a "
                             "pointwise kernel");
  std::string name;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto it = argNames.find(v); it != argNames.end())
      return it->second;
    name = fresh("ld");
    std::string at = idx.str();
    // A strided argument (a transposed view the trace recorded) is read
    // where its traced strides put the element.
    if (SmallVector<int64_t> strides = tracedStrides(arg); !strides.empty())
      at = stridedOffset(shapeOf(arg), strides, idx, narrow);
    os << indent << "const float " << name << " = "
       << fromStorage(storage.value_or(Storage::F32),
                      "in" + std::to_string(arg.getArgNumber()) + "[" + at +
                          "]")
       << ";\n";
    memo[key] = name;
    return name;
  }
  auto aten = dyn_cast<AtenOp>(v.getDefiningOp());
  if (!aten)
    return unsupported("op '" + displayName(v.getDefiningOp()) +
                       "' is not generated yet");
  const OpInfo *info = aten.getInfo();
  if (info->kind == OpKind::Reduction) {
    if (info->recipe == Recipe::BatchNorm) {
      auto e = affineNormAt(aten, idx, os, indent);
      if (!e)
        return e.takeError();
      name = *e;
      if (storage && *storage != Storage::F32) { // as eager stores it
        name = fresh("t");
        os << indent << "const float " << name << " = "
           << roundToStorage(*storage, *e) << "; // rounded\n";
      }
    } else if (normStats.count(aten)) {
      auto e = softmaxFromStatsAt(aten, idx, os, indent);
      if (!e)
        return e.takeError();
      name = *e;
    } else if (auto s = blockStage(aten)) {
      name = fresh("t");
      os << indent << resultType(*s) << " " << name << "; // "
         << displayName(aten) << ", reduced by the whole block\n"
         << indent << "{\n";
      auto e = s->reduced.empty() ? emitBlockPoolStage(*this, *s, idx, name, os,
                                                       indent.str() + "  ")
                                  : emitBlockStage(*this, *s, idx, name, os,
                                                   indent.str() + "  ");
      if (e)
        return std::move(e);
      os << indent << "}\n";
      newScope();
    } else if (isSerialRecipe(info->recipe)) {
      auto it = stageFns.find(aten);
      if (it == stageFns.end()) {
        auto s = analyzeStage(kernel, aten);
        if (!s)
          return s.takeError();
        auto saved = std::move(memo);
        memo.clear();
        std::string body;
        llvm::raw_string_ostream bs(body);
        if (auto e = emitSerialStage(*this, *s, bs, "    "))
          return std::move(e);
        memo = std::move(saved);
        std::string fn = "s" + std::to_string(stageFns.size());
        stageDefs += "  // " + displayName(aten) + ", evaluated per element\n" +
                     "  auto " + fn + " = [&](long long o) -> " +
                     resultType(*s) + " {\n" + body + "  };\n";
        it = stageFns.try_emplace(aten, fn).first;
      }
      name = fresh("t");
      os << indent << "const " << valueCType(aten->getResult(0)) << " " << name
         << " = " << it->second << "(" << idx << "); // " << displayName(aten)
         << "\n";
    } else {
      return unsupported(llvm::Twine(kindName(info->kind)) + " op '" +
                         displayName(aten) +
                         "' is generated only as the last stage of a region");
    }
    memo[key] = name;
    return name;
  }
  // kb-sink-views' copy after a pointwise op on a strided tensor: the
  // kernel writes row-major whatever its operand's layout, so the value is
  // the operand's at the same index. Ahead of the index maps below (a
  // contiguous is a flat one) so that no condition of indexMapOf's (an
  // unmutated input) can refuse it.
  if (aten->hasAttr(kRowMajorCopyAttr)) {
    auto val = valueAt(aten.getArgs()[0], idx, os, indent);
    if (!val)
      return val.takeError();
    memo[key] = *val;
    return *val;
  }
  // An index-map op (a permute, view, roll, slice, select or constant pad
  // kb-form-regions let a stage go on through): its element at `idx` is
  // its input's at the index the map gives, or a pad's constant.
  if (info->indexMap != IndexMap::None) {
    std::optional<IndexMapParams> m = indexMapOf(aten);
    Value src = aten.getArgs()[0];
    if (!m || !storageOf(src.getType()))
      return unsupported("'" + displayName(aten) +
                         "' without constant dims or a static float32 input");
    ArrayRef<int64_t> in = shapeOf(src), out = shapeOf(v);
    std::string off = idx.str(), inside;
    switch (m->map) {
    case IndexMap::None:
    case IndexMap::Flat:
      break;
    case IndexMap::Permute:
      off = permuteOffset(in, m->dims, idx, narrow);
      break;
    case IndexMap::Roll:
      off = rollOffset(in, m->shifts, m->dims, idx, narrow);
      break;
    case IndexMap::Slice:
      off = sliceOffset(in, out, m->dim, m->start, m->step, idx, narrow);
      break;
    case IndexMap::Select:
      off = selectOffset(in, m->dim, m->index, idx, narrow);
      break;
    case IndexMap::Pad:
      std::tie(inside, off) = padOffset(in, out, m->pads, idx);
      break;
    }
    std::string sub = off;
    if (m->map != IndexMap::Flat &&
        !llvm::all_of(off, [](char c) { return isalnum(c) || c == '_'; })) {
      sub = fresh("i");
      os << indent << "const "
         << (narrow && m->map != IndexMap::Pad ? "unsigned" : "long long")
         << " " << sub << " = " << off << "; // " << displayName(aten) << "\n";
    }
    std::string in_;
    if (m->map == IndexMap::Pad) {
      in_ = fresh("p");
      os << indent << "const bool " << in_ << " = " << inside << ";\n";
    }
    auto val = valueAt(src, sub, os, indent);
    if (!val)
      return val.takeError();
    name = *val;
    if (m->map == IndexMap::Pad) {
      name = fresh("t");
      os << indent << "const float " << name << " = " << in_ << " ? " << *val
         << " : " << floatLiteral(m->value) << "; // " << displayName(aten)
         << "\n";
    }
    memo[key] = name;
    return name;
  }
  if (aten.getName() == "cat")
    return catAt(aten, idx, os, indent, key);
  if (info->kind != OpKind::Elementwise && info->kind != OpKind::Broadcast)
    return unsupported(llvm::Twine(kindName(info->kind)) + " op '" +
                       displayName(aten) + "' is not generated yet");
  // Tensor operands at their own (broadcast) index, then the expression.
  ArrayRef<int64_t> space = shapeOf(v);
  llvm::DenseMap<Value, std::string> operands;
  for (auto [k, spec] : llvm::enumerate(info->args)) {
    Value operand = aten.getArgs()[k];
    // Scalar constants (also 0-d tensor constants) are rendered as literals.
    if (spec.type != ArgType::Tensor || isNone(operand) ||
        !isa<RankedTensorType>(operand.getType()) ||
        operand.getDefiningOp<ConstantOp>())
      continue;
    auto t = cast<RankedTensorType>(operand.getType());
    if (t.getRank() > (int64_t)space.size())
      return unsupported("operand '" + spec.name + "' of '" +
                         displayName(aten) + "' does not broadcast");
    if (argNames.count(operand)) {
      operands[operand] = argNames.lookup(operand);
      continue;
    }
    std::string off = operandOffset(t.getShape(), space, idx);
    std::string sub = idx.str();
    if (off != idx) {
      if (off == "0" || llvm::all_of(off, [](char c) { return isalnum(c); })) {
        sub = off;
      } else {
        sub = fresh("i");
        os << indent << "const long long " << sub << " = " << off << ";\n";
      }
    }
    auto val = valueAt(operand, sub, os, indent);
    if (!val)
      return val.takeError();
    operands[operand] = *val;
  }
  std::string expr;
  if (info->style == OpStyle::Cast) {
    // A constant operand was skipped above: a scalar is its literal, a
    // tensor constant is no kernel operand (render says so).
    auto self = render(aten, info->args[0], aten.getArgs()[0], operands);
    if (!self)
      return self.takeError();
    expr = *self;
  } else {
    auto e = substitute(aten, operands);
    if (!e)
      return e.takeError();
    expr = *e;
  }
  // Eager stores a 16-bit op's result rounded (cast ops included).
  if (storage)
    expr = roundToStorage(*storage, expr);
  name = fresh("t");
  os << indent << (isBool ? "const bool " : "const float ") << name << " = "
     << expr << "; // " << displayName(aten) << "\n";
  memo[key] = name;
  return name;
}

llvm::Expected<std::string>
RegionEmitter::render(AtenOp op, const ArgSpec &arg, Value v,
                      const OperandNames &operands) {
  auto e = operandExpression(op, arg, v, operands);
  if (!e)
    return unsupported(llvm::toString(e.takeError()));
  return e;
}

llvm::Expected<std::string>
RegionEmitter::substitute(AtenOp op, const OperandNames &operands) {
  auto e = pointwiseExpression(op, operands);
  if (!e)
    return unsupported(llvm::toString(e.takeError()));
  return e;
}

std::string codegen::normElement(llvm::StringRef x, llvm::StringRef mean,
                                 llvm::StringRef rstd, llvm::StringRef w,
                                 llvm::StringRef b) {
  std::string y = "(float)(((double)" + x.str() + " - " + mean.str() + ") * " +
                  rstd.str() + ")";
  if (!w.empty())
    y += " * " + w.str();
  if (!b.empty())
    y += " + " + b.str();
  return y;
}

std::string codegen::softmaxExp(llvm::StringRef arg) {
  return "expf(" + arg.str() + ")";
}

std::string codegen::softmaxQuotient(llvm::StringRef ex, llvm::StringRef m,
                                     llvm::StringRef acc, bool fast,
                                     bool safe) {
  std::string y = fast ? "kb::softmax_div(" + ex.str() + ", " + acc.str() + ")"
                       : ex.str() + " / " + acc.str();
  return safe ? "(" + m.str() + " == -kb::inf() ? 0.f : " + y + ")" : y;
}

std::string codegen::softmaxElement(llvm::StringRef x, llvm::StringRef m,
                                    llvm::StringRef acc, bool log, bool fast,
                                    bool safe) {
  if (log)
    return "__fsub_rn(" + x.str() + ", " + m.str() + ") - logf(" + acc.str() +
           ")";
  return softmaxQuotient(
      softmaxExp("__fsub_rn(" + x.str() + ", " + m.str() + ")"), m, acc, fast,
      safe);
}

// A softmax whose rows' max and sum of exponentials a cross-row kernel's
// first phase stored (CrossRow.cpp): the split kernel's element expression
// (RowPlans.cpp) with the statistics of the element's row.
llvm::Expected<std::string>
RegionEmitter::softmaxFromStatsAt(AtenOp op, llvm::StringRef idx,
                                  llvm::raw_ostream &os,
                                  llvm::StringRef indent) {
  auto s = analyzeStage(kernel, op);
  if (!s)
    return s.takeError();
  auto [m, acc] = normStats.lookup(op);
  if (s->recipe == Recipe::LayerNorm && rowStats.count(op)) {
    // The norm's element as its row kernel writes it (RowPlans.cpp), from
    // the held row's statistics; the affine's operands over the
    // normalised dim, at the element's column.
    auto x = valueAt(s->input, idx, os, indent);
    if (!x)
      return x.takeError();
    ArrayRef<int64_t> shape = s->inShape;
    std::string affine[2];
    const char *names[2] = {"weight", "bias"};
    std::string col;
    for (int k = 0; k < 2; ++k) {
      Value t = op.getArg(names[k]);
      if (!t || isNone(t))
        continue;
      if (col.empty()) {
        col = fresh("c");
        os << indent << "const long long " << col << " = "
           << operandOffset(shape.take_back(), shape, idx) << ";\n";
      }
      auto v = valueAt(t, col, os, indent);
      if (!v)
        return v.takeError();
      affine[k] = *v;
    }
    std::string name = fresh("t");
    os << indent << "const float " << name << " = "
       << normElement(*x, m, acc, affine[0], affine[1]) << "; // "
       << displayName(op) << " (the row's statistics)\n";
    return name;
  }
  if (!isSoftmaxRecipe(s->recipe))
    return unsupported("'" + displayName(op) +
                       "' from a first phase's statistics");
  if (!rowStats.count(op)) {
    int64_t d = s->reduced.empty() ? 0 : s->reduced[0];
    ArrayRef<int64_t> in = s->inShape;
    int64_t R = in.empty() ? 1 : in[d], inner = product(in.drop_front(d + 1));
    // 32-bit where every index fits: two 64-bit divisions an element cost
    // more than its load (softmax over a middle dim of 48 -> layer_norm(255),
    // seed 20261251 task 1).
    std::string row = fresh("q"), x = indexOperand(idx, narrow);
    os << indent << "const long long " << row << " = ";
    if (inner == 1)
      os << x << " / " << intLit(R, narrow) << ";\n";
    else
      os << "(" << x << " / " << intLit(R * inner, narrow) << ") * "
         << intLit(inner, narrow) << " + " << x << " % "
         << intLit(inner, narrow) << ";\n";
    m += "[" + row + "]";
    acc += "[" + row + "]";
  }
  auto x = valueAt(s->input, idx, os, indent);
  if (!x)
    return x.takeError();
  std::string y = softmaxElement(*x, m, acc, s->recipe == Recipe::LogSoftmax,
                                 false, s->recipe == Recipe::SafeSoftmax);
  std::string name = fresh("t");
  os << indent << "const float " << name << " = " << y << "; // "
     << displayName(op)
     << (rowStats.count(op) ? " (the row's statistics)\n"
                            : " (row statistics from the first phase)\n");
  return name;
}

std::string RegionEmitter::operandOffset(ArrayRef<int64_t> in,
                                         ArrayRef<int64_t> space,
                                         llvm::StringRef idx) {
  // An operand of the value's own shape keeps its index (and with it the
  // coordinates, for the operands it broadcasts in turn).
  if (auto c = coordinates.find(idx.str());
      c != coordinates.end() && in != space &&
      ArrayRef<int64_t>(c->second.first) == space)
    if (auto fromCoords = coordinateOffset(in, space, c->second.second, narrow))
      return *fromCoords;
  return broadcastOffset(in, space, idx, narrow);
}

// batch_norm with training=false is a per-channel affine map of running
// statistics, computed in ATen's order (kb::bn_eval); a missing weight is
// ATen's 1 and a missing bias its 0.
llvm::Expected<std::string>
RegionEmitter::affineNormAt(AtenOp op, llvm::StringRef idx,
                            llvm::raw_ostream &os, llvm::StringRef indent) {
  auto training = getConstantBool(op.getArg("training"));
  auto eps = getConstantNumber(op.getArg("eps"));
  auto stats = normStats.find(op);
  if (!training || (*training && stats == normStats.end()) || !eps)
    return unsupported("batch_norm in training mode is generated only as the "
                       "last stage of a region");
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  if (shape.size() < 2)
    return unsupported("batch_norm of a tensor with fewer than 2 dims");
  // The channel as the offset into a [C, 1, ...] operand: 32-bit math
  // where the kernel's tensors allow, none where the loop has it.
  SmallVector<int64_t> perChannel(shape.size() - 1, 1);
  perChannel.front() = shape[1];
  std::string ch = fresh("c");
  os << indent << "const long long " << ch << " = "
     << operandOffset(perChannel, shape, idx) << ";\n";
  auto x = valueAt(op.getArg("input"), idx, os, indent);
  if (!x)
    return x.takeError();
  auto channelValue = [&](llvm::StringRef name) -> llvm::Expected<std::string> {
    Value t = op.getArg(name);
    if (!t || isNone(t))
      return std::string();
    return valueAt(t, ch, os, indent);
  };
  if (stats != normStats.end()) {
    // The split kernel's element, in its order (RowPlans.cpp): these
    // statistics are the ones it would have combined.
    auto w = channelValue("weight"), b = channelValue("bias");
    for (auto *e : {&w, &b})
      if (!*e)
        return e->takeError();
    // Plain loads: no SM read these addresses before the barrier that
    // follows their stores, so no L1 holds a stale line of them.
    std::string y = normElement(*x, stats->second.first + "[" + ch + "]",
                                stats->second.second + "[" + ch + "]", *w, *b);
    std::string name = fresh("t");
    os << indent << "const float " << name << " = " << y << "; // "
       << displayName(op) << " (batch statistics from the first phase)\n";
    return name;
  }
  auto mean = channelValue("running_mean"), var = channelValue("running_var");
  auto w = channelValue("weight"), b = channelValue("bias");
  for (auto *e : {&mean, &var, &w, &b})
    if (!*e)
      return e->takeError();
  if (mean->empty() || var->empty())
    return unsupported("batch_norm without running statistics in eval mode");
  std::string y = "kb::bn_eval(" + *x + ", " + *mean + ", " + *var + ", " +
                  floatLiteral(*eps) + ", " + (w->empty() ? "1.f" : *w) + ", " +
                  (b->empty() ? "0.f" : *b) + ")";
  std::string name = fresh("t");
  os << indent << "const float " << name << " = " << y << "; // "
     << displayName(op) << " (running statistics)\n";
  return name;
}

/// cat at `idx` of its result: the listed tensor the index falls in along
/// the dim, evaluated only in that branch (the others' indices would be
/// out of their bounds). Values computed inside a branch stay there: the
/// memo is restored after each.
llvm::Expected<std::string>
RegionEmitter::catAt(AtenOp aten, llvm::StringRef idx, llvm::raw_ostream &os,
                     llvm::StringRef indent, const MemoKey &key) {
  auto list = aten.getArgs()[0].getDefiningOp<ListOp>();
  auto dimAttr = getConstantNumber(aten.getArgs()[1]);
  ArrayRef<int64_t> out = shapeOf(aten->getResult(0));
  int64_t rank = out.size();
  if (!list || !dimAttr || rank == 0)
    return unsupported("'" + displayName(aten) +
                       "' without a list of tensors and a constant dim");
  int64_t d = (int64_t)*dimAttr < 0 ? (int64_t)*dimAttr + rank : *dimAttr;
  if (d < 0 || d >= rank)
    return unsupported("'" + displayName(aten) + "' dim out of range");
  int64_t inner = product(out.drop_front(d + 1));
  std::string I = narrow ? "unsigned" : "long long";
  std::string at = indexOperand(idx, narrow);
  // The index as (outer, c, within) around the dim; names of their own
  // (an element function's outputs are o0, o1, ...).
  std::string c = fresh("catc"), outer = fresh("cato"), within;
  os << indent << "const " << I << " " << c << " = "
     << (inner == 1 ? at : "(" + at + " / " + intLit(inner, narrow) + ")")
     << " % " << intLit(out[d], narrow) << "; // " << displayName(aten) << "\n";
  os << indent << "const " << I << " " << outer << " = " << at << " / "
     << intLit(inner * out[d], narrow) << ";\n";
  if (inner != 1) {
    within = fresh("catw");
    os << indent << "const " << I << " " << within << " = " << at << " % "
       << intLit(inner, narrow) << ";\n";
  }
  std::string name = fresh("t");
  os << indent << "float " << name << ";\n";
  int64_t offset = 0;
  auto elements = list.getElements();
  for (auto [k, e] : llvm::enumerate(elements)) {
    ArrayRef<int64_t> shape = shapeOf(e);
    if ((int64_t)shape.size() != rank)
      return unsupported("'" + displayName(aten) +
                         "' of tensors of ranks "
                         "other than its result's");
    int64_t size = shape[d];
    bool last = k + 1 == elements.size();
    os << indent << (k ? "} else " : "")
       << (last ? std::string("{\n")
                : "if (" + c + " < " + intLit(offset + size, narrow) + ") {\n");
    std::string inner2 = indent.str() + "  ";
    std::string sub = fresh("i");
    std::string along =
        offset ? "(" + c + " - " + intLit(offset, narrow) + ")" : c;
    os << inner2 << "const " << I << " " << sub << " = " << outer << " * "
       << intLit(size * inner, narrow) << " + "
       << (inner == 1 ? along
                      : along + " * " + intLit(inner, narrow) + " + " + within)
       << ";\n";
    auto saved = memo;
    auto val = valueAt(e, sub, os, inner2);
    memo = std::move(saved);
    if (!val)
      return val.takeError();
    os << inner2 << name << " = " << *val << ";\n";
    offset += size;
  }
  os << indent << "}\n";
  if (offset != out[d])
    return unsupported("'" + displayName(aten) +
                       "' whose inputs do not add up to its result");
  memo[key] = name;
  return name;
}

std::string RegionEmitter::referenceIR(YieldOp yield,
                                       ArrayRef<unsigned> extraReturns) {
  Block &body = kernel.getBody().front();
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DenseMap<Value, std::string> ir;
  os << "graph(";
  for (auto [k, arg] : llvm::enumerate(body.getArguments())) {
    ir[arg] = "%in" + std::to_string(k);
    os << (k ? ", " : "") << ir[arg] << " : Tensor";
  }
  os << "):\n";
  unsigned id = 0;
  auto next = [&] { return "%v" + std::to_string(id++); };
  for (Operation &op : body.without_terminator()) {
    if (auto c = dyn_cast<ConstantOp>(op)) {
      std::string n = next();
      ir[c] = n;
      Attribute a = c.getValue();
      if (isa<NoneType>(c.getType()))
        os << "  " << n << " : NoneType = prim::Constant()\n";
      else if (auto s = dyn_cast<StringAttr>(a))
        // A device keeps its type: aten::to's overloads take a Device, and
        // the interpreter finds no schema for a str there (GPT-2's mask).
        os << "  " << n << " : "
           << (isa<DeviceType>(c.getType()) ? "Device" : "str")
           << " = prim::Constant[value=" << cString(s.getValue()) << "]()\n";
      else if (auto b = dyn_cast<BoolAttr>(a))
        os << "  " << n
           << " : bool = prim::Constant[value=" << (b.getValue() ? 1 : 0)
           << "]()\n";
      else if (auto i = dyn_cast<IntegerAttr>(a))
        os << "  " << n << " : int = prim::Constant[value=" << i.getInt()
           << "]()\n";
      else if (auto f = dyn_cast<FloatAttr>(a)) {
        // TorchScript's own spelling: a double, exactly, and inf / -inf /
        // nan (CUDA's kb::inf() does not parse).
        double d = f.getValueAsDouble();
        std::string lit = std::isnan(d)   ? "nan"
                          : std::isinf(d) ? (d > 0 ? "inf" : "-inf")
                                          : doubleLiteral(d);
        os << "  " << n << " : float = prim::Constant[value=" << lit << "]()\n";
      } else if (auto arr = dyn_cast<ArrayAttr>(a)) {
        std::vector<std::string> elems;
        for (Attribute e : arr) {
          std::string en = next();
          os << "  " << en << " : int = prim::Constant[value="
             << cast<IntegerAttr>(e).getInt() << "]()\n";
          elems.push_back(en);
        }
        os << "  " << n << " : int[] = prim::ListConstruct("
           << llvm::join(elems, ", ") << ")\n";
      }
      continue;
    }
    if (auto l = dyn_cast<ListOp>(op)) {
      std::string n = next();
      ir[l] = n;
      std::vector<std::string> elems;
      for (Value e : l.getElements())
        elems.push_back(ir.lookup(e));
      bool tensors = llvm::any_of(l.getElements(), [](Value e) {
        return isa<RankedTensorType>(e.getType());
      });
      os << "  " << n << " : " << (tensors ? "Tensor[]" : "int[]")
         << " = prim::ListConstruct(" << llvm::join(elems, ", ") << ")\n";
      continue;
    }
    auto aten = cast<AtenOp>(op);
    std::vector<std::string> results;
    for (Value r : aten->getResults()) {
      ir[r] = next();
      results.push_back(ir[r] + " : Tensor");
    }
    std::vector<std::string> args;
    for (Value a : aten.getArgs())
      args.push_back(ir.lookup(a));
    os << "  " << llvm::join(results, ", ") << " = aten::" << aten.getName()
       << "(" << llvm::join(args, ", ") << ")\n";
  }
  std::vector<std::string> rets;
  for (Value v : yield.getValues())
    rets.push_back(ir.lookup(v));
  // Inputs an op updates in place (batch_norm's running statistics): the
  // interpreter returns the updated tensors.
  for (unsigned a : extraReturns)
    rets.push_back(ir.lookup(body.getArgument(a)));
  os << "  return (" << llvm::join(rets, ", ") << ")\n";
  return text;
}
