//===- Stages.cpp - Reductions and poolings: operands and serial code -----===//
//
// analyzeStage reads a reduction-like op's operands (dims, windows, ...) the
// way ATen interprets them; reduceProgram is the accumulation each Reduce
// recipe needs (shared by the warp/block row kernels); emitSerialStage
// computes one output element in one thread, which is how a reduction or
// pooling feeds a later stage, and how poolings and reductions over
// non-trailing dims are generated.
//
//===----------------------------------------------------------------------===//

#include "Stages.h"

#include "kb/CodeGen/IndexMath.h"
#include "kb/CodeGen/OpTemplate.h"

#include "kb/Transforms/OpUtils.h"

#include <cmath>

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

namespace {

/// Padded average-pooling windows of at most this many elements are
/// unrolled (their loads issued together); larger ones keep loops over the
/// clipped window.
constexpr int64_t kUnrolledWindowMax = 64;

bool isReduceRecipe(Recipe r) {
  return llvm::is_contained({Recipe::Sum, Recipe::Mean, Recipe::Prod,
                             Recipe::Amax, Recipe::Amin, Recipe::Logsumexp,
                             Recipe::Var, Recipe::Std, Recipe::Pnorm,
                             Recipe::Cosine, Recipe::Argmax, Recipe::Argmin},
                            r);
}

/// ATen's int[] pooling operands: one value stands for every spatial dim.
std::optional<SmallVector<int64_t>> spatialList(Value v, int64_t k,
                                                SmallVector<int64_t> dflt) {
  if (!v || isNone(v))
    return dflt;
  auto l = getConstantIntList(v);
  if (!l)
    return std::nullopt;
  if (l->empty())
    return dflt;
  if (l->size() == 1)
    return SmallVector<int64_t>(k, (*l)[0]);
  if ((int64_t)l->size() != k)
    return std::nullopt;
  return *l;
}

/// ATen's pooling_output_shape (aten/src/ATen/native/Pool.h): the pooled
/// size of a dim of `in` elements; nullopt when ATen would refuse the
/// window (a size below 1).
std::optional<int64_t> pooledSize(int64_t in, int64_t kernel, int64_t stride,
                                  int64_t pad, int64_t dilation, bool ceil) {
  if (kernel < 1 || stride < 1 || dilation < 1 || pad < 0)
    return std::nullopt;
  int64_t num =
      in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  // The last window must start inside the input or its left padding.
  if (ceil && (out - 1) * stride >= in + pad)
    --out;
  if (out < 1)
    return std::nullopt;
  return out;
}

} // namespace

bool codegen::isArgRecipe(Recipe recipe) {
  return recipe == Recipe::Argmax || recipe == Recipe::Argmin;
}

const char *codegen::resultType(const StageInfo &s) {
  return isArgRecipe(s.recipe) ? "long long" : "float";
}

bool codegen::isPerElementRecipe(Recipe recipe) {
  return isSoftmaxRecipe(recipe) || isNormRecipe(recipe);
}

bool codegen::isPoolRecipe(Recipe r) {
  return r == Recipe::MaxPool || r == Recipe::AvgPool ||
         r == Recipe::AdaptiveAvgPool || r == Recipe::AdaptiveMaxPool;
}

bool codegen::isAdaptivePoolRecipe(Recipe r) {
  return r == Recipe::AdaptiveAvgPool || r == Recipe::AdaptiveMaxPool;
}

bool codegen::isSerialRecipe(Recipe recipe) {
  return isReduceRecipe(recipe) || isPoolRecipe(recipe);
}

llvm::Expected<StageInfo> codegen::analyzeStage(KernelOp kernel, AtenOp op) {
  auto fail = [&](const llvm::Twine &why) -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   kernel.getSymName() + ": " + why);
  };
  StageInfo s;
  s.op = op;
  s.recipe = op.getInfo()->recipe;
  std::string name = displayName(op);
  if (s.recipe == Recipe::None)
    return fail("reduction op '" + name + "' is not generated yet");
  s.input = op.getArgs()[0];
  bool arg = isArgRecipe(s.recipe);
  if (!isF32Tensor(s.input.getType()) ||
      !(arg ? isI64Tensor(op->getResult(0).getType())
            : isF32Tensor(op->getResult(0).getType())))
    return fail("'" + name + "' of a tensor that is not static float32");
  for (Value r : op->getResults().drop_front())
    if (!r.use_empty())
      return fail("'" + name + "' indices are used; only values are generated");
  // A dtype of float32 over a float32 input is no conversion:
  // transformers' attention softmax passes it (LLaMA).
  if (Value dt = op.getArg("dtype"); dt && !isNone(dt)) {
    auto code = getConstantNumber(dt);
    if (!code || *code != kFloat32ScalarType)
      return fail("'" + name + "' with a dtype argument other than float32");
  }
  if (auto h = getConstantBool(op.getArg("half_to_float")); h && *h)
    return fail("'" + name + "' with half_to_float");
  auto in = shapeOf(s.input), out = shapeOf(op->getResult(0));
  s.inShape.assign(in.begin(), in.end());
  s.outShape.assign(out.begin(), out.end());
  int64_t rank = in.size();

  if (s.recipe == Recipe::Cosine) {
    s.input2 = op.getArg("x2");
    auto eps = getConstantNumber(op.getArg("eps"));
    if (!s.input2 || shapeOf(s.input2) != shapeOf(s.input) ||
        !isF32Tensor(s.input2.getType()))
      return fail("'" + name + "' of inputs of different shapes or types");
    if (!eps)
      return fail("'" + name + "' with a non-constant eps");
    s.eps = *eps;
  }
  if (isReduceRecipe(s.recipe) || isSoftmaxRecipe(s.recipe)) {
    auto dims = reductionDims(op, rank);
    if (!dims)
      return fail("'" + name + "' " + llvm::toString(dims.takeError()));
    s.reduced = *dims;
    if (arg) {
      // The index shares a double with the value's 32 order bits
      // (kb::arg_key): exact below 2^21 elements per row.
      int64_t count = 1;
      for (int64_t d : s.reduced)
        count *= d < rank ? in[d] : 1; // a 0-d input's dim 0 is no dim
      if (count > kArgMaxElements)
        return fail("'" + name + "' over more than " +
                    llvm::Twine(kArgMaxElements) + " elements per row");
    }
    if (s.recipe == Recipe::Pnorm) {
      // ATen's orders: p > 0, 0 (a count of nonzeros) and +-inf; negative
      // finite orders (a harmonic-like mean) are left to ATen.
      // frobenius_norm has no ord: the 2-norm.
      auto ord = op.getName() == "frobenius_norm"
                     ? std::optional<double>(2.0)
                     : getConstantNumber(op.getArg("ord"));
      if (!ord)
        return fail("'" + name + "' with a non-constant ord");
      if (*ord < 0 && !std::isinf(*ord))
        return fail("'" + name + "' with a negative finite ord");
      s.ord = *ord;
    }
    if (s.recipe == Recipe::Var || s.recipe == Recipe::Std) {
      if (Value c = op.getArg("correction"); c && !isNone(c)) {
        auto n = getConstantNumber(c);
        if (!n)
          return fail("'" + name + "' with a non-constant correction");
        s.correction = *n;
      } else if (Value u = op.getArg("unbiased")) {
        auto b = getConstantBool(u);
        if (!b)
          return fail("'" + name + "' with a non-constant unbiased flag");
        s.correction = *b ? 1 : 0;
      }
    }
    int64_t kept = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(s.reduced, d))
        kept *= in[d];
    bool shapePreserving = isSoftmaxRecipe(s.recipe);
    if (product(out) != (shapePreserving ? product(in) : kept))
      return fail("'" + name + "' has an unexpected result shape");
    return s;
  }

  if (isPoolRecipe(s.recipe)) {
    llvm::StringRef n = op.getName();
    int64_t k = n.ends_with("1d") ? 1 : n.ends_with("2d") ? 2 : 3;
    if (rank < k || (int64_t)out.size() != rank)
      return fail("'" + name + "' of a tensor of unexpected rank");
    s.spatial = k;
    for (int64_t d = 0; d < rank - k; ++d)
      if (in[d] != out[d])
        return fail("'" + name + "' changes a leading dim");
    if (isAdaptivePoolRecipe(s.recipe)) {
      // A result shape unlike output_size is a malformed graph (a trace
      // never writes one).
      if (auto size = spatialList(op.getArg("output_size"), k, {});
          size && !size->empty() &&
          ArrayRef<int64_t>(*size) != out.take_back(k))
        return fail("'" + name + "' has a result shape unlike its output_size");
      // Global pooling is a mean (a max) over the trailing dims: it gets
      // the parallel row kernels instead of one thread per output.
      if (llvm::all_of(out.take_back(k), [](int64_t d) { return d == 1; })) {
        s.recipe =
            s.recipe == Recipe::AdaptiveAvgPool ? Recipe::Mean : Recipe::Amax;
        for (int64_t d = rank - k; d < rank; ++d)
          s.reduced.push_back(d);
        return s;
      }
      // Windows that are contiguous runs of the input (one pooled dim cut
      // into equal parts, whole dims after it: (2, 1) windows of 64 x 56)
      // are rows too: the input viewed as [..., O, L / O * rest]. One
      // thread per output read 1792 floats each (gen-20261211 task 2:
      // 0.265 ms where ATen took 0.320).
      int64_t p = rank - k;
      while (p < rank && in[p] == out[p])
        ++p;
      if (p < rank && in[p] % out[p] == 0 &&
          llvm::all_of(out.drop_front(p + 1),
                       [](int64_t d) { return d == 1; })) {
        s.recipe =
            s.recipe == Recipe::AdaptiveAvgPool ? Recipe::Mean : Recipe::Amax;
        s.inShape.resize(p + 2);
        s.inShape[p] = out[p];
        s.inShape[p + 1] = in[p] / out[p] * product(in.drop_front(p + 1));
        s.reduced = {p + 1};
      }
      return s;
    }
    auto kernelSize = spatialList(op.getArg("kernel_size"), k, {});
    if (!kernelSize || kernelSize->empty())
      return fail("'" + name + "' with a non-constant kernel_size");
    auto stride = spatialList(op.getArg("stride"), k, *kernelSize);
    auto padding =
        spatialList(op.getArg("padding"), k, SmallVector<int64_t>(k, 0));
    auto dilation =
        spatialList(op.getArg("dilation"), k, SmallVector<int64_t>(k, 1));
    if (!stride || !padding || !dilation)
      return fail("'" + name + "' with non-constant window operands");
    std::optional<bool> ceil = false;
    if (Value c = op.getArg("ceil_mode"); c && !isNone(c))
      ceil = getConstantBool(c);
    if (!ceil)
      return fail("'" + name + "' with a non-constant ceil_mode");
    for (int64_t d = 0; d < k; ++d) {
      auto size = pooledSize(in[rank - k + d], (*kernelSize)[d], (*stride)[d],
                             (*padding)[d], (*dilation)[d], *ceil);
      if (!size || *size != out[rank - k + d])
        return fail("'" + name +
                    "' has a result shape unlike its window's (ATen's "
                    "pooling_output_shape)");
    }
    s.kernel = *kernelSize;
    s.stride = *stride;
    s.padding = *padding;
    s.dilation = *dilation;
    if (Value c = op.getArg("count_include_pad")) {
      auto b = getConstantBool(c);
      if (!b)
        return fail("'" + name + "' with a non-constant count_include_pad");
      s.countIncludePad = *b;
    }
    if (Value d = op.getArg("divisor_override"); d && !isNone(d)) {
      auto v = getConstantNumber(d);
      if (!v)
        return fail("'" + name + "' with a non-constant divisor_override");
      s.divisor = (int64_t)*v;
    }
    return s;
  }
  // Norms: the norm emitter reads their operands.
  return s;
}

ReduceProgram codegen::reduceProgram(const StageInfo &s, int64_t count) {
  ReduceProgram p;
  std::string n = std::to_string(count);
  const Recipe r = s.recipe;
  if (r == Recipe::Sum || r == Recipe::Mean) {
    // Double sums: with +-3e38 in a row, fp32 partial sums (compensated or
    // not) overflow to Inf or cancel to NaN in an order unlike ATen's, where
    // the float64 truth is finite (kb-verify's special-value trials rejected
    // sums over rows of 32 and means over a middle dim that way, sessions
    // 14-15); a double cannot overflow, and its rounding errors are far
    // below fp32's. Memory-bound either way: one DADD per element.
    p.passes.push_back(
        {{{"acc", "double", "0.0", "Sum"}}, "acc += (double){x};", ""});
    // A mean divides by the count; a sum of window averages folded into
    // the rows (StageInfo::sumDivisor) by the window size.
    std::string divisor = r == Recipe::Mean  ? n
                          : s.sumDivisor > 0 ? std::to_string(s.sumDivisor)
                                             : "";
    p.result =
        divisor.empty() ? "(float)acc" : "(float)(acc / " + divisor + ".0)";
  } else if (r == Recipe::Prod) {
    // In double, as sum: ATen's float partial products overflow, underflow
    // and round in an order of their own; a double's product of fp32
    // values is exact to far below fp32's rounding over any row a float
    // result can hold.
    p.passes.push_back(
        {{{"acc", "double", "1.0", "Prod"}}, "acc *= (double){x};", ""});
    p.result = "(float)acc";
  } else if (r == Recipe::Amax || r == Recipe::Amin) {
    bool mx = r == Recipe::Amax;
    p.passes.push_back(
        {{{"acc", "float", mx ? "(-kb::inf())" : "kb::inf()",
           mx ? "Max" : "Min"}},
         std::string("acc = kb::nan") + (mx ? "max" : "min") + "(acc, {x});",
         ""});
    p.result = "acc";
  } else if (isArgRecipe(r)) {
    // One double key per element, order bits of the value above the
    // complement of its index (kb::arg_key): the max key is ATen's choice
    // (the first NaN, else the first max), and max is associative, so
    // every layout's combine (shuffles, shared memory, split partials)
    // gives the same index whatever the order.
    p.passes.push_back({{{"acc", "double", "0.0", "KeyMax"}},
                        std::string("acc = kb::KeyMax()(acc, kb::arg_key<") +
                            (r == Recipe::Argmax ? "true" : "false") +
                            ">({x}, {c}));",
                        ""});
    p.result = "kb::arg_index(acc)";
  } else if (r == Recipe::Logsumexp) {
    // ATen: the max is replaced by 0 where it is infinite, so all -inf rows
    // give -inf and +inf rows +inf instead of NaN.
    p.passes.push_back({{{"m", "float", "(-kb::inf())", "Max"}},
                        "m = kb::nanmax(m, {x});",
                        "const float mz = isinf(m) ? 0.f : m;"});
    p.passes.push_back({{{"acc", "float", "0.f", "Sum"}},
                        "acc += expf(__fsub_rn({x}, mz));",
                        ""});
    p.result = "logf(acc) + mz";
  } else if (r == Recipe::Pnorm) {
    // As ATen's norm kernels: |x|^p accumulated in float (here compensated,
    // like sum), then the p-th root; +-inf take the max/min of |x| (NaN
    // propagates), 0 counts the nonzeros (NaN counts).
    double q = s.ord;
    if (std::isinf(q)) {
      bool mx = q > 0;
      p.passes.push_back({{{"acc", "float", mx ? "(-kb::inf())" : "kb::inf()",
                            mx ? "Max" : "Min"}},
                          std::string("acc = kb::nan") + (mx ? "max" : "min") +
                              "(acc, fabsf({x}));",
                          ""});
      p.result = "acc";
    } else if (q == 0 || q == 1 || q == 2) {
      // In double, as sum: |x| and x * x of an fp32 are exact there.
      std::string term = q == 0   ? "({x} != 0.f ? 1.0 : 0.0)"
                         : q == 1 ? "fabs((double){x})"
                                  : "(double){x} * (double){x}";
      p.passes.push_back(
          {{{"acc", "double", "0.0", "Sum"}}, "acc += " + term + ";", ""});
      p.result = q == 2 ? "(float)sqrt(acc)" : "(float)acc";
    } else {
      std::string term = "powf(fabsf({x}), " + floatLiteral(q) + ")";
      p.passes.push_back({{{"acc", "float", "0.f", "CSum"}},
                          "kb::csum_add(acc, accc, " + term + ");",
                          "acc += accc;"});
      p.result = "powf(acc, " + floatLiteral(1.0 / q) + ")";
    }
  } else if (r == Recipe::Cosine) {
    // One pass, three sums in double: ATen divides each input by its norm
    // first and sums the products (three passes over memory and two
    // divisions per element); sum(x y) / (max(|x|, eps) max(|y|, eps)) is
    // the same quotient, its sums exact to far below fp32's rounding, and
    // a double does not overflow where ATen's fp32 norms of +-3e38 do.
    p.passes.push_back({{{"sxx", "double", "0.0", "Sum"},
                         {"syy", "double", "0.0", "Sum"},
                         {"sxy", "double", "0.0", "Sum"}},
                        "{ const double xd = (double){x}, yd = (double){y}; "
                        "sxx += xd * xd; syy += yd * yd; sxy += xd * yd; }",
                        ""});
    p.result = "(float)(sxy / kb::cosine_denominator(sxx, syy, " +
               doubleLiteral(s.eps) + "))";
  } else if (r == Recipe::Var || r == Recipe::Std) {
    // Two passes in double: the mean, then squared deviations from it.
    p.passes.push_back({{{"acc", "double", "0.0", "Sum"}},
                        "acc += (double){x};",
                        "const double mu = acc / " + n + ".0;"});
    p.passes.push_back({{{"q", "double", "0.0", "Sum"}},
                        "{ const double d = (double){x} - mu; q += d * d; }",
                        ""});
    std::string var =
        "q / fmax(" + n + ".0 - " + std::to_string(s.correction) + ", 0.0)";
    p.result =
        r == Recipe::Var ? "(float)(" + var + ")" : "(float)sqrt(" + var + ")";
  }
  return p;
}

std::string codegen::declareAcc(const Accumulator &a) {
  return a.type + " " + a.name + " = " + a.init +
         (a.combine == "CSum" ? ", " + a.name + "c = 0.f;" : ";");
}

std::string codegen::combineAcc(const Accumulator &a, int64_t lanes) {
  if (a.combine == "CSum")
    return lanes ? "kb::group_csum<" + std::to_string(lanes) + ">(" + a.name +
                       ", " + a.name + "c);"
                 : "kb::block_csum(" + a.name + ", " + a.name + "c, smemc);";
  if (lanes)
    return a.name + " = kb::group_reduce<" + std::to_string(lanes) + ">(" +
           a.name + ", kb::" + a.combine + "());";
  return a.name + " = kb::block_reduce(" + a.name + ", " + a.init + ", " +
         (a.type == "double" ? "smemd" : "smem") + ", kb::" + a.combine +
         "());";
}

std::string codegen::combineOnlineBlock(const ReducePass &pass,
                                       llvm::StringRef indent) {
  const Accumulator &m = pass.accs[0], &s = pass.accs[1];
  std::string in = indent.str(), mt = m.name + "t";
  // A thread whose max is the block's keeps its sum as it is (also -inf,
  // whose sum is 0, where exp(-inf - -inf) would be NaN); a NaN max makes
  // the block's NaN and every sum NaN, as the two-pass form's.
  return in + "{\n" + in + "  const float " + mt + " = " + m.name + ";\n" +
         in + "  " + combineAcc(m, 0) + "\n" + in + "  " + s.name + " = (" +
         mt + " == " + m.name + ") ? " + s.name + " : " + s.name +
         " * expf(__fsub_rn(" + mt + ", " + m.name + "));\n" + in + "}\n" +
         in + combineAcc(s, 0) + "\n";
}

std::string codegen::combineWarpsInOrder(const Accumulator &a,
                                         llvm::StringRef buf,
                                         llvm::StringRef cbuf, int64_t warps,
                                         llvm::StringRef indent,
                                         int64_t width) {
  std::string s, in = indent.str(), n = a.name, W = std::to_string(width);
  bool csum = a.combine == "CSum";
  s += in + n + " = " + buf.str() + "[lane];\n";
  if (csum)
    s += in + n + "c = " + cbuf.str() + "[lane];\n";
  s += in + "for (int w = 1; w < " + std::to_string(warps) + "; ++w) {\n";
  if (csum)
    s += in + "  kb::csum_add(" + n + ", " + n + "c, " + buf.str() + "[w * " +
         W + " + lane]);\n" + in + "  " + n + "c += " + cbuf.str() + "[w * " +
         W + " + lane];\n";
  else
    s += in + "  " + n + " = kb::" + a.combine + "()(" + n + ", " + buf.str() +
         "[w * " + W + " + lane]);\n";
  return s + in + "}\n";
}

std::string codegen::stepText(const StageInfo &s, const ReducePass &pass,
                              llvm::StringRef x, llvm::StringRef y,
                              llvm::StringRef c) {
  std::string step = pass.step;
  if (!pass.hold.empty())
    step = replaceAll(step, "{h}", "(" + pass.hold + ")");
  step = replaceAll(replaceAll(step, "{x}", x), "{c}", c);
  return s.input2 ? replaceAll(step, "{y}", y) : step;
}

llvm::Expected<std::string>
codegen::stepAt(ElementSource &e, const StageInfo &s, const ReducePass &pass,
                llvm::raw_ostream &os, llvm::StringRef indent) {
  auto x = e.valueAt(s.input, "i", os, indent);
  if (!x)
    return x.takeError();
  std::string y;
  if (s.input2) {
    auto v = e.valueAt(s.input2, "i", os, indent);
    if (!v)
      return v.takeError();
    y = *v;
  }
  return stepText(s, pass, *x, y, "j");
}

llvm::Error codegen::emitSerialStage(ElementSource &e, const StageInfo &s,
                                     llvm::raw_ostream &os,
                                     llvm::StringRef indent) {
  const bool narrow = e.narrowIndices();
  std::string in2 = indent.str() + "  ";
  if (isReduceRecipe(s.recipe)) {
    SmallVector<int64_t> kept;
    int64_t count = 1;
    for (int64_t d = 0; d < (int64_t)s.inShape.size(); ++d)
      if (llvm::is_contained(s.reduced, d))
        count *= s.inShape[d];
      else
        kept.push_back(d);
    os << indent << "const long long base = "
       << subspaceOffset(s.inShape, kept, "o", narrow) << ";\n";
    ReduceProgram p = reduceProgram(s, count);
    for (const ReducePass &pass : p.passes) {
      for (const Accumulator &a : pass.accs)
        os << indent << declareAcc(a) << "\n";
      os << indent << "for (long long j = 0; j < " << count << "LL; ++j) {\n"
         << in2 << "const long long i = base + "
         << subspaceOffset(s.inShape, s.reduced, "j", narrow) << ";\n";
      e.newScope();
      auto x = stepAt(e, s, pass, os, in2);
      if (!x)
        return x.takeError();
      os << in2 << *x << "\n" << indent << "}\n";
      e.newScope();
      if (!pass.after.empty())
        os << indent << pass.after << "\n";
    }
    os << indent << "return " << p.result << "; // " << displayName(s.op)
       << "\n";
    return llvm::Error::success();
  }
  if (!isPoolRecipe(s.recipe))
    return e.unsupported("'" + displayName(s.op) +
                         "' is generated only as the last stage of a region");
  int64_t k = s.spatial;
  ArrayRef<int64_t> inSp = ArrayRef<int64_t>(s.inShape).take_back(k);
  ArrayRef<int64_t> outSp = ArrayRef<int64_t>(s.outShape).take_back(k);
  int64_t planeIn = product(inSp), planeOut = product(outSp);
  // Coordinates in 32 bits when the tensors allow (see `narrow`).
  const char *T = narrow ? "unsigned" : "long long";
  std::string O = narrow ? "(unsigned)o" : "o";
  os << indent << "const " << T << " plane = " << O << " / "
     << intLit(planeOut, narrow) << ";\n";
  std::vector<int64_t> inStride(k, 1), outStride(k, 1);
  for (int64_t d = k - 2; d >= 0; --d) {
    inStride[d] = inStride[d + 1] * inSp[d + 1];
    outStride[d] = outStride[d + 1] * outSp[d + 1];
  }
  for (int64_t d = 0; d < k; ++d) {
    os << indent << "const int p" << d << " = (int)(";
    os << (outStride[d] == 1
               ? O
               : "(" + O + " / " + intLit(outStride[d], narrow) + ")")
       << " % " << intLit(outSp[d], narrow) << ");\n";
  }
  auto elementIndex = [&] {
    std::string e = "plane * " + intLit(planeIn, narrow);
    for (int64_t d = 0; d < k; ++d)
      e += std::string(" + (") + T + ")x" + std::to_string(d) +
           (inStride[d] == 1 ? "" : " * " + intLit(inStride[d], narrow));
    return e;
  };
  // Per dim of the input, the coordinate of element i: the leading dims'
  // from the plane, the spatial ones the window loops' x<d>.
  auto windowCoordinates = [&] {
    int64_t lead = (int64_t)s.inShape.size() - k;
    std::vector<std::string> coords;
    int64_t inner = 1;
    for (int64_t d = lead - 1; d >= 0; --d) {
      std::string c = inner == 1 ? std::string("plane")
                                 : "plane / " + intLit(inner, narrow);
      if (d > 0)
        c = "(" + c + ") % " + intLit(s.inShape[d], narrow);
      coords.insert(coords.begin(), c);
      inner *= s.inShape[d];
    }
    for (int64_t d = 0; d < k; ++d)
      coords.push_back("x" + std::to_string(d));
    return coords;
  };
  std::string ind = indent.str();
  // The body of the window loops opened at `ind`: folds the element into
  // acc with `step(x)`, then closes the k loops.
  auto foldWindow = [&](llvm::function_ref<std::string(llvm::StringRef)> step)
      -> llvm::Error {
    os << ind << "const long long i = " << elementIndex() << ";\n";
    e.newScope();
    // Operands broadcast over the spatial dims (a convolution's per-channel
    // bias) are addressed from the plane, which the window loops do not
    // change, instead of dividing i for every element (seed 20261221 task
    // 1: a 2x2x2 max pool of (x + b)^2 spent 8 divisions an output).
    e.seedCoordinates("i", s.inShape, windowCoordinates());
    // A staged input (emitStagedRows) is read from shared memory once.
    auto [stage, base] = e.stagedPoolInput(s.op);
    if (!stage.empty())
      os << ind << "const float kbs = " << stage << "[(int)(i - " << base
         << ")];\n";
    auto x = stage.empty() ? e.valueAt(s.input, "i", os, ind)
                           : llvm::Expected<std::string>("kbs");
    if (!x)
      return x.takeError();
    os << ind << step(*x) << "\n";
    e.newScope();
    for (int64_t d = 0; d < k; ++d) {
      ind.resize(ind.size() - 2);
      os << ind << "}\n";
    }
    return llvm::Error::success();
  };
  // ATen's order, a plain float sum.
  auto sumWindow = [&] {
    return foldWindow([](llvm::StringRef x) {
      return "acc = __fadd_rn(acc, " + x.str() + ");";
    });
  };
  // ATen's max pools: a NaN in the window wins (val > max || isnan(val)).
  auto maxWindow = [&]() -> llvm::Error {
    if (auto err = foldWindow([](llvm::StringRef x) {
          return "if (" + x.str() + " > acc || " + x.str() + " != " + x.str() +
                 ") acc = " + x.str() + ";";
        }))
      return err;
    os << ind << "return acc; // " << displayName(s.op) << "\n";
    return llvm::Error::success();
  };
  // Loops over the windows [b, e) of every spatial dim.
  auto openWindowLoops = [&] {
    for (int64_t d = 0; d < k; ++d) {
      std::string D = std::to_string(d);
      os << ind << "for (int x" << D << " = b" << D << "; x" << D << " < e" << D
         << "; ++x" << D << ") {\n";
      ind += "  ";
    }
  };
  // The kernel's window as unrolled loops over k0, k1, ... with x<d> the
  // input coordinate, an element skipped where `skip` (of d's digit and d)
  // holds.
  auto openUnrolledWindow =
      [&](llvm::function_ref<std::string(const std::string &, int64_t)> skip) {
        for (int64_t d = 0; d < k; ++d) {
          std::string D = std::to_string(d);
          os << ind << "#pragma unroll\n"
             << ind << "for (int k" << D << " = 0; k" << D << " < "
             << s.kernel[d] << "; ++k" << D << ") {\n";
          ind += "  ";
          os << ind << "const int x" << D << " = p" << D << " * " << s.stride[d]
             << " - " << s.padding[d] << " + k" << D << " * " << s.dilation[d]
             << ";\n";
          std::string cond = skip(D, d);
          if (!cond.empty())
            os << ind << "if (" << cond << ") continue;\n";
        }
      };
  // Every window inside the input (no padding, no ceil_mode overhang): the
  // loops have constant trip counts and no bounds checks, so they unroll and
  // all of a window's loads are issued together.
  bool adaptive = isAdaptivePoolRecipe(s.recipe);
  bool inside = !adaptive;
  for (int64_t d = 0; inside && d < k; ++d)
    inside = s.padding[d] == 0 &&
             (outSp[d] - 1) * s.stride[d] + (s.kernel[d] - 1) * s.dilation[d] <
                 inSp[d];
  if (s.recipe == Recipe::MaxPool || inside) {
    // ATen: a NaN in the window wins (val > max || isnan(val)); windows
    // never include padding.
    bool mx = s.recipe == Recipe::MaxPool;
    os << ind << (mx ? "float acc = -kb::inf();\n" : "float acc = 0.f;\n");
    openUnrolledWindow([&](const std::string &D, int64_t d) {
      return inside
                 ? std::string()
                 : "x" + D + " < 0 || x" + D + " >= " + std::to_string(inSp[d]);
    });
    if (!mx) {
      // Avg pooling inside the input: ATen's window order, plain sum.
      if (auto err = sumWindow())
        return err;
      int64_t count = 1;
      for (int64_t d = 0; d < k; ++d)
        count *= s.kernel[d];
      os << ind << "return acc / "
         << floatLiteral(s.divisor ? *s.divisor : count) << "; // "
         << displayName(s.op) << "\n";
      return llvm::Error::success();
    }
    return maxWindow();
  }
  auto [count, padded] =
      emitWindowBounds(s, "", s.countIncludePad && !s.divisor, os, ind);
  // Adaptive windows vary in size by one at most: loops unrolled to the
  // largest, an element past the window's end skipped, visit the same
  // elements in the same order with all of a window's loads issued
  // together. The loops over [b, e) did not unroll: adaptive_max_pool2d 7
  // of 32 x 8 after a subtraction ran at 1.2 TB/s on an H100
  // (gen-20261306 task 1).
  SmallVector<int64_t> widest = widestWindow(s);
  int64_t widestSize = product(widest);
  auto openAdaptiveWindow = [&] {
    if (widestSize > kUnrolledWindowMax)
      return openWindowLoops();
    for (int64_t d = 0; d < k; ++d) {
      std::string D = std::to_string(d);
      os << ind << "#pragma unroll\n"
         << ind << "for (int k" << D << " = 0; k" << D << " < " << widest[d]
         << "; ++k" << D << ") {\n";
      ind += "  ";
      os << ind << "const int x" << D << " = b" << D << " + k" << D << ";\n"
         << ind << "if (x" << D << " >= e" << D << ") continue;\n";
    }
  };
  if (s.recipe == Recipe::AdaptiveMaxPool) {
    // ATen's adaptive_max_pool: the window in (d, h, w) order; windows are
    // never empty.
    os << ind << "float acc = -kb::inf();\n";
    openAdaptiveWindow();
    return maxWindow();
  }
  if (!adaptive) {
    os << ind << "if (";
    for (int64_t d = 0; d < k; ++d)
      os << (d ? " || " : "") << "b" << d << " >= e" << d;
    os << ") return 0.f;\n";
  }
  // A plain sum in ATen's window order (d, h, w nested): a window holding
  // +-3e38 cancels exactly as in eager and its float64 run.
  os << ind << "float acc = 0.f;\n";
  int64_t windowSize = 1;
  for (int64_t d = 0; d < k; ++d)
    windowSize *= s.kernel.empty() ? 1 : s.kernel[d];
  if (adaptive) {
    openAdaptiveWindow();
  } else if (windowSize > kUnrolledWindowMax) {
    openWindowLoops();
  } else {
    // The kernel's window unrolled, elements outside [b, e) skipped: the
    // same elements in the same order as loops over [b, e), with every
    // load of the window issued together (the loops' bounds depend on the
    // output, so they did not unroll: avg_pool2d 3x3 stride 3 padding 1
    // ran at 3.2 TB/s where torch.compile's reaches 4.0, gen-20261214
    // task 3).
    openUnrolledWindow([](const std::string &D, int64_t) {
      return "x" + D + " < b" + D + " || x" + D + " >= e" + D;
    });
  }
  if (auto err = sumWindow())
    return err;
  std::string divisor = adaptive            ? count
                        : s.divisor         ? std::to_string(*s.divisor)
                        : s.countIncludePad ? padded
                                            : count;
  os << ind << "return acc / (float)(" << divisor << "); // "
     << displayName(s.op) << "\n";
  return llvm::Error::success();
}

llvm::Error codegen::emitBlockStage(ElementSource &e, const StageInfo &s,
                                    llvm::StringRef idx, llvm::StringRef result,
                                    llvm::raw_ostream &os,
                                    llvm::StringRef indent) {
  const bool narrow = e.narrowIndices();
  SmallVector<int64_t> kept;
  int64_t count = 1;
  for (int64_t d = 0; d < (int64_t)s.inShape.size(); ++d)
    if (llvm::is_contained(s.reduced, d))
      count *= s.inShape[d];
    else
      kept.push_back(d);
  std::string in2 = indent.str() + "  ";
  os << indent << "const long long base = "
     << subspaceOffset(s.inShape, kept, idx, narrow) << ";\n";
  ReduceProgram p = reduceProgram(s, count);
  for (const ReducePass &pass : p.passes) {
    for (const Accumulator &a : pass.accs)
      os << indent << declareAcc(a) << "\n";
    os << indent << "for (long long j = threadIdx.x; j < " << count
       << "LL; j += blockDim.x) {\n"
       << in2 << "const long long i = base + "
       << subspaceOffset(s.inShape, s.reduced, "j", narrow) << ";\n";
    e.newScope();
    auto x = stepAt(e, s, pass, os, in2);
    if (!x)
      return x.takeError();
    os << in2 << *x << "\n" << indent << "}\n";
    e.newScope();
    for (const Accumulator &a : pass.accs)
      os << indent << combineAcc(a, 0) << "\n";
    if (!pass.after.empty())
      os << indent << pass.after << "\n";
  }
  os << indent << result << " = " << p.result << ";\n";
  return llvm::Error::success();
}

SmallVector<int64_t> codegen::widestWindow(const StageInfo &s) {
  int64_t k = s.spatial;
  ArrayRef<int64_t> inSp = ArrayRef<int64_t>(s.inShape).take_back(k);
  ArrayRef<int64_t> outSp = ArrayRef<int64_t>(s.outShape).take_back(k);
  if (!isAdaptivePoolRecipe(s.recipe))
    return SmallVector<int64_t>(s.kernel.begin(), s.kernel.end());
  SmallVector<int64_t> widest(k, 1);
  for (int64_t d = 0; d < k; ++d)
    widest[d] = widestAdaptiveWindow(inSp[d], outSp[d]);
  return widest;
}

std::pair<std::string, std::string>
codegen::emitWindowBounds(const StageInfo &s, llvm::StringRef pre,
                          bool poolSize, llvm::raw_ostream &os,
                          llvm::StringRef ind) {
  int64_t k = s.spatial;
  ArrayRef<int64_t> inSp = ArrayRef<int64_t>(s.inShape).take_back(k);
  ArrayRef<int64_t> outSp = ArrayRef<int64_t>(s.outShape).take_back(k);
  bool adaptive = isAdaptivePoolRecipe(s.recipe);
  std::string P = pre.str(), count, padded;
  for (int64_t d = 0; d < k; ++d) {
    std::string D = std::to_string(d), p = P + "p" + D, b = P + "b" + D,
                e = P + "e" + D, n = P + "n" + D;
    if (adaptive) {
      // Windows [floor(p*I/O), ceil((p+1)*I/O)).
      os << ind << "const int " << b << " = (" << p << " * " << inSp[d]
         << ") / " << outSp[d] << ", " << e << " = ((" << p << " + 1) * "
         << inSp[d] << " + " << outSp[d] - 1 << ") / " << outSp[d] << ";\n";
    } else {
      // ATen's pools: the window from p * stride - padding, an average's
      // pool size counting padding, then clipped to the input.
      os << ind << "int " << b << " = " << p << " * " << s.stride[d] << " - "
         << s.padding[d] << ", " << e << " = min(" << b << " + " << s.kernel[d]
         << ", " << inSp[d] + s.padding[d] << ");\n"
         << (poolSize
                 ? ind.str() + "const int " + n + " = " + e + " - " + b + ";\n"
                 : std::string())
         << ind << b << " = max(" << b << ", 0);\n"
         << ind << e << " = min(" << e << ", " << inSp[d] << ");\n";
    }
    count += (d ? " * " : "") + std::string("(") + e + " - " + b + ")";
    padded += (d ? " * " : "") + n;
  }
  return {count, padded};
}

bool codegen::isArgIndex(Value v) {
  auto a = v.getDefiningOp<AtenOp>();
  return a && a.getInfo() && isArgRecipe(a.getInfo()->recipe) &&
         isI64Tensor(v.getType());
}

const char *codegen::valueCType(Value v) {
  return isArgIndex(v) ? "long long" : "float";
}

/// Per dim, the window of a pooling from `in` to `out` whose every dim is
/// a multiple of its output (adaptive pooling's windows are then equal;
/// 1 where the dim is kept); none where one is not.
std::optional<SmallVector<int64_t>>
codegen::equalWindows(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  if (in.size() != out.size())
    return std::nullopt;
  SmallVector<int64_t> window;
  for (auto [i, o] : llvm::zip_equal(in, out)) {
    if (o < 1 || i % o)
      return std::nullopt;
    window.push_back(i / o);
  }
  return window;
}

SmallVector<int64_t> codegen::outputOrigins(const StageInfo &s) {
  SmallVector<int64_t> origins;
  int64_t rank = s.inShape.size();
  bool kept = s.outShape.size() == s.inShape.size();
  for (int64_t d = 0; d < rank; ++d)
    if (kept || !llvm::is_contained(s.reduced, d))
      origins.push_back(d);
  // Stages whose input became [rows, row elements] (windowsAsRows) keep
  // the output's own dims.
  if (origins.size() != s.outShape.size()) {
    origins.clear();
    for (int64_t d = 0, e = s.outShape.size(); d < e; ++d)
      origins.push_back(d);
  }
  return origins;
}
