//===- OpUtils.cpp - Helpers shared by the kb passes ----------------------===//

#include "kb/Transforms/OpUtils.h"
#include "kb/Transforms/ValueRange.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>

using namespace mlir;
using namespace kb;

std::optional<double> kb::getConstantNumber(Value v) {
  auto c = v ? v.getDefiningOp<ConstantOp>() : nullptr;
  if (!c)
    return std::nullopt;
  Attribute a = c.getValue();
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto b = dyn_cast<BoolAttr>(a))
    return b.getValue() ? 1.0 : 0.0;
  if (auto i = dyn_cast<IntegerAttr>(a))
    return static_cast<double>(i.getInt());
  return std::nullopt;
}

std::optional<bool> kb::getConstantBool(Value v) {
  if (auto n = getConstantNumber(v))
    return *n != 0.0;
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> kb::getConstantIntList(Value v) {
  if (!v)
    return std::nullopt;
  SmallVector<int64_t> out;
  if (auto c = v.getDefiningOp<ConstantOp>()) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
      out.push_back(i.getInt());
      return out;
    }
    auto arr = dyn_cast<ArrayAttr>(c.getValue());
    if (!arr)
      return std::nullopt;
    for (Attribute e : arr) {
      auto i = dyn_cast<IntegerAttr>(e);
      if (!i)
        return std::nullopt;
      out.push_back(i.getInt());
    }
    return out;
  }
  if (auto list = v.getDefiningOp<ListOp>()) {
    for (Value e : list.getElements()) {
      auto n = getConstantNumber(e);
      if (!n)
        return std::nullopt;
      out.push_back(static_cast<int64_t>(*n));
    }
    return out;
  }
  return std::nullopt;
}

bool kb::isNone(Value v) { return v && isa<NoneType>(v.getType()); }

Value kb::makeF64(OpBuilder &b, Location loc, double v) {
  return ConstantOp::create(b, loc, b.getF64Type(), b.getF64FloatAttr(v));
}

Value kb::makeI64(OpBuilder &b, Location loc, int64_t v) {
  return ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(v));
}

Value kb::makeBool(OpBuilder &b, Location loc, bool v) {
  return ConstantOp::create(b, loc, b.getI1Type(), b.getBoolAttr(v));
}

Value kb::makeNone(OpBuilder &b, Location loc) {
  return ConstantOp::create(b, loc, b.getNoneType(), b.getUnitAttr());
}

Value kb::makeI64List(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  SmallVector<Value> elems;
  for (int64_t v : values)
    elems.push_back(makeI64(b, loc, v));
  return ListOp::create(b, loc, ListType::get(b.getContext(), b.getI64Type()),
                        elems);
}

Value kb::makeBroadcastAdd(OpBuilder &b, Location loc, Type type, Value x,
                           Value y) {
  Value one = makeI64(b, loc, 1);
  return AtenOp::create(b, loc, TypeRange{type}, b.getStringAttr("add"),
                        b.getStringAttr("Tensor"), nullptr,
                        b.getStringAttr(kindName(OpKind::Broadcast)),
                        ValueRange{x, y, one})
      ->getResult(0);
}

bool kb::isEpilogueOp(Operation *op) {
  if (!isa<AtenOp>(op))
    return false;
  OpKind kind = getKind(op);
  return kind == OpKind::Elementwise || kind == OpKind::Broadcast ||
         kind == OpKind::Reduction;
}

namespace {
/// Ops that read only a tensor's metadata, which the runtime's guards fix.
bool readsShapeOnly(StringRef name) {
  return llvm::is_contained(
      {"size", "dim", "numel", "len", "device", "dtype", "layout", "is_cuda"},
      name);
}

/// Factories that read their first operand's metadata only (ids.new_ones,
/// zeros_like): their other operands count.
bool readsFirstOperandShape(StringRef name) {
  return llvm::is_contained({"new_ones", "new_zeros", "new_full", "ones_like",
                             "zeros_like", "full_like"},
                            name);
}

/// Ops whose result is not a function of their operands.
bool isNondeterministic(StringRef name) {
  for (StringRef word : {"rand", "bernoulli", "normal", "uniform", "dropout",
                         "multinomial", "exponential", "poisson", "empty"})
    if (name.contains(word))
      return true;
  return false;
}
} // namespace

bool kb::isGuardedConstant(Value v) {
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    Operation *def = x.getDefiningOp();
    if (!def || isa<ParameterOp>(def))
      return false; // a graph input or a parameter
    if (isa<ConstantOp>(def))
      continue;
    StringRef name;
    if (auto a = dyn_cast<AtenOp>(def)) {
      if (a.getInplace())
        return false;
      name = a.getName();
    } else if (auto o = dyn_cast<OpaqueOp>(def)) {
      name = o.getName().rsplit("::").second;
      if (name.empty())
        name = o.getName();
    } else if (!isa<ListOp, LaunchOp>(def)) {
      return false; // a launch computes from its operands alone
    }
    if (isNondeterministic(name))
      return false;
    if (readsShapeOnly(name))
      continue;
    for (auto [i, operand] : llvm::enumerate(def->getOperands()))
      if (i > 0 || !readsFirstOperandShape(name))
        work.push_back(operand);
  }
  return true;
}

bool kb::isConstantLike(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<ConstantOp>(def))
    return true;
  if (auto list = dyn_cast<ListOp>(def))
    return llvm::all_of(list.getElements(), isConstantLike);
  return false;
}

namespace {
/// A graph op's operands that are constants.
struct GraphOperands : KnownOperands {
  mutable AtenOp op; // MLIR's op handles are values with non-const accessors
  explicit GraphOperands(AtenOp op) : op(op) {}
  std::optional<double> number(llvm::StringRef name) const override {
    return getConstantNumber(op.getArg(name));
  }
  std::optional<bool> flag(llvm::StringRef name) const override {
    return getConstantBool(op.getArg(name));
  }
};
} // namespace

OpKind kb::computeKind(AtenOp op) {
  const OpInfo *info = op.getInfo();
  if (!info)
    return OpKind::Opaque;
  if (op->hasAttr(kRowMajorCopyAttr))
    return OpKind::Elementwise;
  const OpKind kind = refinedKind(*info, GraphOperands(op));
  if (kind != OpKind::Elementwise || op->getNumResults() != 1)
    return kind;
  // One tensor operand: nothing to broadcast against, whatever its shape
  // (C++ chains are unranked).
  if (llvm::count_if(op.getArgs(),
                     [](Value v) { return isa<TensorType>(v.getType()); }) == 1)
    return OpKind::Elementwise;
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  for (Value operand : op.getArgs()) {
    auto t = dyn_cast<TensorType>(operand.getType());
    if (!t)
      continue;
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !resultType || rt.getShape() != resultType.getShape())
      return OpKind::Broadcast;
  }
  return OpKind::Elementwise;
}

OpKind kb::getKind(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten)
    return OpKind::Opaque;
  if (auto k = aten.getKind()) {
    for (OpKind kind :
         {OpKind::Elementwise, OpKind::Broadcast, OpKind::Injective,
          OpKind::Reduction, OpKind::Anchor, OpKind::Host, OpKind::Opaque})
      if (kindName(kind) == *k)
        return kind;
  }
  return computeKind(aten);
}

bool kb::mutatesOperand(Operation *user, Value v) {
  if (auto aten = dyn_cast<AtenOp>(user))
    return aten.getInplace() && !aten.getArgs().empty() &&
           aten.getArgs()[0] == v;
  if (auto opaque = dyn_cast<OpaqueOp>(user)) {
    auto [base, inplace] = stripInPlace(opaque.getName());
    (void)base;
    return inplace || opaque.getName().contains("Set");
  }
  return false;
}

bool kb::hasMutatingUse(Value v) {
  for (Operation *user : v.getUsers())
    if (mutatesOperand(user, v))
      return true;
  return false;
}

std::string kb::displayName(Operation *op) {
  if (auto aten = dyn_cast<AtenOp>(op))
    return ("aten::" + aten.getName() + (aten.getInplace() ? "_" : "")).str();
  if (auto opaque = dyn_cast<OpaqueOp>(op))
    return opaque.getName().str();
  return op->getName().getStringRef().str();
}

bool kb::isStaticF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

bool kb::hasStaticShape(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() && !isa<UnknownType>(rt.getElementType());
}

int64_t kb::tensorBytes(Type t) {
  if (!hasStaticShape(t))
    return 0;
  auto rt = cast<RankedTensorType>(t);
  int64_t bits = rt.getElementType().getIntOrFloatBitWidth();
  return rt.getNumElements() * std::max<int64_t>(bits / 8, 1);
}

std::optional<SmallVector<int64_t>> kb::encodedStrides(RankedTensorType t) {
  auto list = dyn_cast_or_null<ArrayAttr>(t.getEncoding());
  if (!list || (int64_t)list.size() != t.getRank())
    return std::nullopt;
  SmallVector<int64_t> strides;
  for (Attribute a : list) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i || i.getInt() < 0)
      return std::nullopt;
    strides.push_back(i.getInt());
  }
  return strides;
}

bool kb::isRowMajorStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  int64_t expect = 1;
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expect)
      return false;
    expect *= shape[d];
  }
  return true;
}

bool kb::isRowMajorType(RankedTensorType t) {
  std::optional<SmallVector<int64_t>> st = encodedStrides(t);
  return !t.getEncoding() || (st && isRowMajorStrides(t.getShape(), *st));
}

bool kb::hasStridedLayout(RankedTensorType t) {
  std::optional<SmallVector<int64_t>> st = encodedStrides(t);
  return st && !isRowMajorStrides(t.getShape(), *st);
}

/// The strides of `shape` (rank 2 or more) laid out row-major with its
/// last two dims swapped.
static SmallVector<int64_t> swappedLastTwoStrides(ArrayRef<int64_t> shape) {
  size_t r = shape.size();
  SmallVector<int64_t> strides(r);
  strides[r - 2] = 1;
  strides[r - 1] = shape[r - 2];
  int64_t run = shape[r - 2] * shape[r - 1];
  for (size_t d = r - 2; d-- > 0; run *= shape[d])
    strides[d] = run;
  return strides;
}

bool kb::isSwappedLastTwoStrides(ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> strides) {
  size_t r = shape.size();
  if (r < 2 || strides.size() != r)
    return false;
  SmallVector<int64_t> want = swappedLastTwoStrides(shape);
  for (size_t d = 0; d < r; ++d)
    if (shape[d] != 1 && strides[d] != want[d])
      return false;
  return true;
}

bool kb::isTileableTranspose(RankedTensorType t) {
  std::optional<SmallVector<int64_t>> st = encodedStrides(t);
  ArrayRef<int64_t> shape = t.getShape();
  size_t r = shape.size();
  return st && r >= 2 && shape[r - 2] >= kTiledTransposeMinDim &&
         shape[r - 1] >= kTiledTransposeMinDim &&
         isSwappedLastTwoStrides(shape, *st);
}

RankedTensorType kb::rowMajorType(RankedTensorType t) {
  return RankedTensorType::get(t.getShape(), t.getElementType());
}

RankedTensorType kb::swappedLastTwoType(RankedTensorType t) {
  return RankedTensorType::get(
      t.getShape(), t.getElementType(),
      Builder(t.getContext())
          .getI64ArrayAttr(swappedLastTwoStrides(t.getShape())));
}

/// A reduction over the last dim only: the rows a row kernel walks
/// contiguously when its input is row-major.
static bool reducesLastDim(AtenOp a) {
  if (getKind(a) != OpKind::Reduction || a.getArgs().empty())
    return false;
  auto t = dyn_cast<RankedTensorType>(a.getArgs()[0].getType());
  if (!t || t.getRank() == 0)
    return false;
  if (Value shape = a.getArg("normalized_shape")) {
    auto l = getConstantIntList(shape);
    return l && l->size() == 1;
  }
  if (!a.getArg("dim"))
    return false;
  auto dims = reducedDims(a, t.getRank());
  return dims && dims->size() == 1 && dims->front() == t.getRank() - 1;
}

bool kb::isLastDimRowKernel(KernelOp k) {
  bool rows = false;
  k.getBody().walk([&](AtenOp a) { rows |= reducesLastDim(a); });
  return rows;
}

llvm::StringMap<KernelOp> kb::kernelsLaunchedOnce(ModuleOp module) {
  llvm::StringMap<KernelOp> kernels;
  llvm::StringMap<int> launches;
  module.walk([&](KernelOp k) { kernels[k.getSymName()] = k; });
  module.walk([&](LaunchOp l) { ++launches[l.getKernel()]; });
  for (auto &[name, n] : launches)
    if (n != 1)
      kernels.erase(name);
  return kernels;
}

bool kb::isCentringNorm(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo())
    return false;
  Recipe cuda = aten.getInfo()->recipe;
  if (cuda == Recipe::BatchNorm) {
    auto training = getConstantBool(aten.getArg("training"));
    return !training || *training;
  }
  return cuda == Recipe::LayerNorm || cuda == Recipe::GroupNorm ||
         cuda == Recipe::InstanceNorm;
}

bool kb::isCrossRowFirst(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo())
    return false;
  Recipe cuda = aten.getInfo()->recipe;
  if (isSoftmaxRecipe(cuda))
    return true;
  if (cuda != Recipe::BatchNorm)
    return false;
  auto training = getConstantBool(aten.getArg("training"));
  return training && *training;
}

int64_t kb::sameRowFirstRow(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo() || aten.getInfo()->recipe != Recipe::LayerNorm ||
      aten.getArgs().empty())
    return 0;
  auto type = dyn_cast<RankedTensorType>(aten.getArgs()[0].getType());
  auto shape = getConstantIntList(aten.getArg("normalized_shape"));
  if (!type || !type.hasStaticShape() || type.getRank() == 0 || !shape ||
      shape->size() != 1 || (*shape)[0] != type.getShape().back())
    return 0;
  return type.getShape().back();
}

void kb::firstDownstream(ValueRange roots,
                         llvm::function_ref<bool(Operation *)> found) {
  SmallVector<Value> work(roots.begin(), roots.end());
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      if (isa<AtenOp>(user) && getKind(user) == OpKind::Host)
        continue;
      if (found(user))
        return;
      work.append(user->getResults().begin(), user->getResults().end());
    }
  }
}

bool kb::isConvolution(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  return aten && aten.getName() == "_convolution";
}

bool kb::poolWindowsOverlap(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo() || aten.getInfo()->style != OpStyle::Pool)
    return false;
  StringRef name = aten.getName();
  int64_t k = name.ends_with("1d") ? 1 : name.ends_with("2d") ? 2 : 3;
  auto in = dyn_cast<RankedTensorType>(aten.getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() ||
      in.getRank() < k || out.getRank() != in.getRank())
    return true;
  if (name.starts_with("adaptive_")) {
    // Window i is [floor(i * L / O), ceil((i + 1) * L / O)).
    for (int64_t d = in.getRank() - k; d < in.getRank(); ++d)
      if (in.getDimSize(d) % out.getDimSize(d) != 0)
        return true;
    return false;
  }
  auto list = [&](StringRef arg, int64_t dflt) -> SmallVector<int64_t> {
    Value v = aten.getArg(arg);
    if (!v || isNone(v))
      return SmallVector<int64_t>(k, dflt);
    auto l = getConstantIntList(v);
    if (!l)
      return {};
    if (l->size() == 1)
      return SmallVector<int64_t>(k, (*l)[0]);
    return *l;
  };
  SmallVector<int64_t> kernel = list("kernel_size", 0);
  SmallVector<int64_t> stride = list("stride", 0);
  SmallVector<int64_t> dilation = list("dilation", 1);
  if ((int64_t)kernel.size() != k || (int64_t)dilation.size() != k)
    return true;
  if (stride.empty() || stride[0] == 0) // stride [] is the kernel
    stride = kernel;
  if ((int64_t)stride.size() != k)
    return true;
  for (int64_t d = 0; d < k; ++d)
    if (dilation[d] * (kernel[d] - 1) + 1 > stride[d])
      return true;
  return false;
}

namespace {
/// The (name, overload) the side tables (step, singular, growth, periodic
/// ops) know `op` by: an opaque op's name has no overload.
std::optional<std::pair<StringRef, StringRef>> tableKey(Operation *op) {
  if (auto aten = dyn_cast<AtenOp>(op))
    return std::make_pair(aten.getName(), aten.getOverload());
  if (auto opaque = dyn_cast<OpaqueOp>(op))
    return std::make_pair(opaque.getName(), StringRef());
  return std::nullopt;
}

bool inTable(Operation *op, bool (*rows)(StringRef, StringRef)) {
  auto key = tableKey(op);
  return key && rows(key->first, key->second);
}

bool reaches(Operation *op, bool (*test)(Operation *)) {
  bool reached = false;
  firstDownstream(op->getResults(),
                  [&](Operation *user) { return reached = test(user); });
  return reached;
}
} // namespace

bool kb::isStepOperation(Operation *op) {
  if (auto aten = dyn_cast<AtenOp>(op); aten && aten.getName() == "div" &&
                                        op->getNumOperands() == 3 &&
                                        isNone(op->getOperand(2)))
    return false;
  // max.dim, min.dim, topk and sort step through their indices only; their
  // values move with their input's last bits as amax's do
  // (`torch.max(x, 0).values` kept a 0.39 ms region in ATen on seed
  // 20261236 task 1, run70). KB_STEP_OP's RESULT names that result.
  // (topk and sort are not in the op table: they import as opaque ops.)
  auto key = tableKey(op);
  const StepOpInfo *row = key ? findStepOp(key->first, key->second) : nullptr;
  if (!row)
    return false;
  return row->result < 0 || (row->result < (int)op->getNumResults() &&
                             !op->getResult(row->result).use_empty());
}

namespace {
/// sin, cos or tan of a value an exponential made, through pointwise ops
/// (`cos(2 * expm1(x))`): see KB_GROWTH_OP.
bool isPeriodicOfGrowth(Operation *op) {
  if (!inTable(op, isPeriodicOp))
    return false;
  SmallVector<Operation *> work;
  llvm::SmallPtrSet<Operation *, 16> seen;
  auto push = [&](Operation *o) {
    for (Value v : o->getOperands())
      if (Operation *p = v.getDefiningOp(); p && seen.insert(p).second)
        work.push_back(p);
  };
  push(op);
  while (!work.empty() && seen.size() <= 16) {
    Operation *p = work.pop_back_val();
    if (inTable(p, isGrowthOp))
      return true;
    OpKind kind = getKind(p);
    if (kind == OpKind::Elementwise || kind == OpKind::Broadcast)
      push(p);
  }
  return false;
}
} // namespace

bool kb::isSingularOperation(Operation *op) {
  // x^p with a constant p has a bounded slope at 0 for p >= 1 (and p = 0):
  // pow(|x|, 1.5) after a layer norm kept the norm in ATen (gen-20261209
  // task 5, session 25). A fractional p is NaN below 0, so a sign flipped
  // near 0 would be a step: it needs a base that cannot be negative.
  if (auto aten = dyn_cast<AtenOp>(op);
      aten && aten.getName() == "pow" && aten.getOverload() == "Tensor_Scalar")
    if (auto p = getConstantNumber(op->getOperand(1))) {
      auto base = dyn_cast_or_null<AtenOp>(op->getOperand(0).getDefiningOp());
      bool nonNegative =
          base && (base.getName() == "abs" || base.getName() == "relu");
      if (*p == 0.0 || (*p >= 1.0 && (*p == std::floor(*p) || nonNegative)))
        return false;
    }
  return inTable(op, isSingularOp) || isPeriodicOfGrowth(op);
}

bool kb::isInexactReduction(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || getKind(op) != OpKind::Reduction)
    return false;
  for (const OpInfo *info : lookupOverloads(aten.getName()))
    if (info->overload == aten.getOverload())
      return !(info->style == OpStyle::Pool || info->recipe == Recipe::Amax ||
               info->recipe == Recipe::Amin);
  return true;
}

namespace {
/// The elements of a layer norm's row when `op` is one over a static
/// float32 tensor with constant eps and float32 (or absent) affine
/// parameters; 0 otherwise.
int64_t layerNormRow(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo() || aten.getInfo()->recipe != Recipe::LayerNorm ||
      op->getNumResults() != 1)
    return 0;
  Value in = aten.getArg("input");
  auto shape = getConstantIntList(aten.getArg("normalized_shape"));
  if (!in || !isStaticF32(in) || !isStaticF32(op->getResult(0)) || !shape ||
      shape->empty() || !getConstantNumber(aten.getArg("eps")))
    return 0;
  for (StringRef a : {"weight", "bias"})
    if (Value v = aten.getArg(a); v && !isNone(v) && !isStaticF32(v))
      return 0;
  auto dims = cast<RankedTensorType>(in.getType()).getShape();
  if (shape->size() > dims.size())
    return 0;
  int64_t cols = 1;
  for (int64_t d : dims.take_back(shape->size()))
    cols *= d;
  return cols;
}
} // namespace

bool kb::isAtenOrderNorm(Operation *op) {
  int64_t cols = layerNormRow(op);
  // ATen's vectorized path (float4 reads of whole rows, a float count), or
  // for rows not a multiple of 4 its RowwiseMoments path, which one warp a
  // row plays up to 8192 elements (AtenRows.cpp). Both measured 0 bits from
  // eager on an H200 (bench/NOTES.md, sessions 23 and 24). Longer rows not
  // a multiple of 4 take ATen's block of 512 threads as it is (0 bits on
  // rows of 9999 and 65535, session 26).
  return cols >= 1 && cols <= (int64_t(1) << 24);
}

bool kb::isAtenOrderSoftmax(Operation *op) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo() || aten.getInfo()->style != OpStyle::Softmax ||
      op->getNumOperands() < 2 || op->getNumResults() != 1)
    return false;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto dim = getConstantNumber(op->getOperand(1));
  if (!in || !out || !in.hasStaticShape() || !in.getElementType().isF32() ||
      !out.getElementType().isF32() || in.getRank() == 0 || !dim)
    return false;
  // softmax(x, dim, dtype) with a dtype, or _softmax(x, dim, half_to_float)
  // asked to widen, is not ATen's float warp softmax.
  if (op->getNumOperands() > 2 && !isNone(op->getOperand(2)) &&
      getConstantBool(op->getOperand(2)).value_or(true))
    return false;
  int64_t rank = in.getRank(), d = int64_t(*dim);
  if (d < 0)
    d += rank;
  if (d < 0 || d >= rank) // ATen raises; the region's checks say where
    return false;
  // ATen dispatches on the elements after the dim, not on the dim's
  // place: a dim followed only by size-1 dims is its last. There, the
  // persistent warp softmax of at most 1024 elements (SoftMax.cu's
  // dispatch), measured 0 bits from eager over rows of 7, 33, 100, 512 and
  // 1000 (bench/NOTES.md, session 25); elsewhere its spatial kernel.
  auto shape = in.getShape();
  int64_t inner = 1;
  for (int64_t i = d + 1; i < rank; ++i)
    inner *= shape[i];
  if (inner == 1)
    return shape[d] >= 1 && shape[d] <= 1024;
  // One thread folds each row (inner > 64 or dim < 64), or the dim's
  // threads meet in a shared-memory tree (SpatialSoftMax_getBlockSize),
  // measured 0 bits from eager (session 26): the code generator plays
  // both (RowPlans.cpp, AtenSoftmax.cpp).
  return shape[d] >= 1;
}

llvm::Expected<SmallVector<int64_t>> kb::reductionDims(Operation *op,
                                                       int64_t rank) {
  auto fail = [](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
  };
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten)
    return fail("is not an aten op");
  SmallVector<int64_t> dims;
  Value d = aten.getArg("dim");
  if (d && !isNone(d)) {
    if (auto l = getConstantIntList(d))
      dims.assign(l->begin(), l->end());
    else if (auto n = getConstantNumber(d))
      dims.push_back((int64_t)*n);
    else
      return fail("over dims that are not constant");
  }
  if (dims.empty())
    for (int64_t k = 0; k < rank; ++k)
      dims.push_back(k);
  int64_t wrap = std::max<int64_t>(rank, 1);
  for (int64_t &k : dims) {
    if (k < -wrap || k >= wrap)
      return fail("over dim " + llvm::Twine(k) +
                  ", out of range for a tensor of rank " + llvm::Twine(rank));
    k = k < 0 ? k + wrap : k;
  }
  llvm::sort(dims);
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    return fail("names a dim twice");
  return dims;
}

std::optional<SmallVector<int64_t>> kb::reducedDims(Operation *op,
                                                    int64_t rank) {
  if (rank == 0)
    return std::nullopt;
  auto dims = reductionDims(op, rank);
  if (!dims) {
    llvm::consumeError(dims.takeError());
    return std::nullopt;
  }
  return std::move(*dims);
}

bool kb::isAtenReduceShape(Operation *op, int64_t *rowsOut, int64_t *colsOut) {
  auto aten = dyn_cast<AtenOp>(op);
  if (!aten || !aten.getInfo() || aten.getArgs().empty() ||
      op->getNumResults() != 1 ||
      (aten.getInfo()->recipe != Recipe::Sum &&
       aten.getInfo()->recipe != Recipe::Mean))
    return false;
  auto in = dyn_cast<RankedTensorType>(aten.getArgs()[0].getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out || !in.hasStaticShape() || !in.getElementType().isF32() ||
      !out.getElementType().isF32() || in.getRank() == 0)
    return false;
  // sum(x, dtype=...) casts before summing: not ATen's float reduce.
  if (Value dt = aten.getArg("dtype"); dt && !isNone(dt))
    return false;
  int64_t rank = in.getRank();
  auto reduced = reducedDims(op, rank);
  if (!reduced)
    return false;
  SmallVector<int64_t> dims = *reduced;
  // The trailing dims, each once: ATen coalesces them into one reduced dim
  // of contiguous elements.
  for (size_t k = 0; k < dims.size(); ++k)
    if (dims[k] != rank - (int64_t)dims.size() + (int64_t)k)
      return false;
  auto shape = in.getShape();
  int64_t rows = 1, cols = 1;
  for (int64_t k = 0; k < rank; ++k)
    (k < dims.front() ? rows : cols) *= shape[k];
  if (rowsOut)
    *rowsOut = rows;
  if (colsOut)
    *colsOut = cols;
  // ATen's setReduceConfig on the H200 (AtenReduce.cpp): vectorised
  // aligned rows, no row split over CTAs, 16 rows to a block of 32 x 16.
  return cols > 128 && cols % 4 == 0 && rows >= 16 &&
         (cols <= 130560 || rows > 528) && rows * cols < (int64_t(1) << 31);
}

bool kb::isAtenOrderSum(Operation *op) { return isAtenReduceShape(op); }

bool kb::hasAtenOrder(Operation *op) {
  return isAtenOrderNorm(op) || isAtenOrderSoftmax(op) || isAtenOrderSum(op);
}

bool kb::reachesConvolution(Operation *op) {
  return reaches(op, isConvolution);
}

bool kb::isFlippableStep(Operation *op) {
  return isStepOperation(op) && !stepCannotFlip(op);
}

bool kb::reachesStepOp(Operation *op) { return reaches(op, isFlippableStep); }

bool kb::reachesSingularOp(Operation *op) {
  return reaches(op, isSingularOperation);
}
