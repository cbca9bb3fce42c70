//===- NumericsPolicy.cpp - Which fused kernels may replace ATen's
//---------===//
#include "kb/Driver/NumericsPolicy.h"
#include "kb/IR/OpSemantics.h"
#include "kb/Transforms/OpUtils.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace kb {
namespace {

std::string stepOpName(mlir::Operation *op) {
  return isFlippableStep(op) ? displayName(op) : "";
}

std::string singularOpName(mlir::Operation *op) {
  return isSingularOperation(op) ? displayName(op) : "";
}

/// The name `named` gives the first op of `kernel` that reads a value
/// derived from an op `source` accepts (or from the kernel's inputs, when
/// `fromInputs`); "" when there is none.
std::string
firstDerived(KernelOp kernel, bool fromInputs,
             llvm::function_ref<bool(mlir::Operation *)> source,
             llvm::function_ref<std::string(mlir::Operation *)> named) {
  llvm::DenseSet<mlir::Value> derived;
  if (fromInputs)
    for (mlir::Value a : kernel.getBody().front().getArguments())
      derived.insert(a);
  for (mlir::Operation &op : kernel.getBody().front()) {
    bool reads = llvm::any_of(
        op.getOperands(), [&](mlir::Value v) { return derived.contains(v); });
    if (reads)
      if (std::string s = named(&op); !s.empty())
        return s;
    if (reads || source(&op))
      for (mlir::Value r : op.getResults())
        derived.insert(r);
  }
  return "";
}

/// The first singular op of `kernel` that reads a value derived from a
/// centring norm of the kernel, or from the kernel's inputs when `centred`
/// (they come from a norm outside it).
std::string singularAfterNorm(KernelOp kernel, bool centred) {
  return firstDerived(kernel, centred, isCentringNorm, singularOpName);
}

/// Whether an op of `kernel`'s body satisfies `pred`.
bool hasOp(KernelOp kernel, llvm::function_ref<bool(mlir::Operation *)> pred) {
  return llvm::any_of(kernel.getBody().front(),
                      [&](mlir::Operation &op) { return pred(&op); });
}

bool hasAtenOrderReduction(KernelOp kernel) {
  return hasOp(kernel, hasAtenOrder);
}

bool hasCentringNorm(KernelOp kernel) { return hasOp(kernel, isCentringNorm); }

/// The first singular op that `launch`'s results reach through a centring
/// norm (in a kernel or an ATen op downstream, or the launch's own kernel).
std::string singularDownstream(LaunchOp launch, KernelOp kernel,
                               mlir::ModuleOp module) {
  SmallVector<std::pair<mlir::Value, bool>> work;
  bool own = kernel && hasCentringNorm(kernel);
  for (mlir::Value r : launch.getResults())
    work.push_back({r, own});
  llvm::DenseSet<mlir::Value> seen[2]; // by `centred`
  while (!work.empty()) {
    auto [v, centred] = work.pop_back_val();
    if (!seen[centred].insert(v).second)
      continue;
    for (mlir::Operation *user : v.getUsers()) {
      if (isa<AtenOp>(user) && getKind(user) == OpKind::Host)
        continue;
      bool next = centred;
      if (auto other = dyn_cast<LaunchOp>(user)) {
        if (auto k = module.lookupSymbol<KernelOp>(other.getKernel())) {
          if (std::string s = singularAfterNorm(k, centred); !s.empty())
            return s;
          next = centred || hasCentringNorm(k);
        }
      } else {
        if (centred)
          if (std::string s = singularOpName(user); !s.empty())
            return s;
        next = centred || isCentringNorm(user);
      }
      for (mlir::Value r : user->getResults())
        work.push_back({r, next});
    }
  }
  return "";
}

/// The first step op of `kernel`.
std::string firstStepOp(KernelOp kernel) {
  for (mlir::Operation &op : kernel.getBody().front())
    if (std::string s = stepOpName(&op); !s.empty())
      return s;
  return "";
}

/// The first step op of `kernel` whose operands depend on an inexact op of
/// the kernel.
std::string stepAfterInexact(KernelOp kernel) {
  return firstDerived(kernel, false, isInexactReduction, stepOpName);
}

} // namespace

bool hasStepOrSingularOp(KernelOp kernel) {
  return hasOp(kernel, [](mlir::Operation *op) {
    return isFlippableStep(op) || isSingularOperation(op);
  });
}

/// The numerics policy lets a pointwise or max-pooling kernel feed a TF32
/// convolution or a step op because such kernels round as ATen's do;
/// kb-verify measured whether this one does (eager_mismatches), and where it
/// does not (a formula or a contraction unlike ATen's), the ATen ops stay.
void keepIfNotIdentical(RegionRecord &rec, const NumericsFacts &facts,
                        bool fuseBeforeTF32) {
  if (rec.status != RegionStatus::Verified)
    return;
  bool beforeConv = facts.feedsConvolution && !fuseBeforeTF32;
  // A layer norm in ATen's order passed the policy on the promise of
  // ATen's bits, before the step or singular ops inside or after it.
  std::string promised = !rec.atenOrder && !rec.orderFree ? ""
                         : !facts.stepInside.empty()      ? facts.stepInside
                         : !facts.singularInside.empty()  ? facts.singularInside
                         : !facts.singularDownstream.empty()
                             ? facts.singularDownstream
                             : "";
  if (!beforeConv && facts.stepDownstream.empty() && promised.empty())
    return;
  int64_t differ = rec.eagerMismatches;
  if (differ == 0)
    return;
  std::string where = beforeConv ? std::string("a TF32 convolution")
                      : !facts.stepDownstream.empty()
                          ? "a step op (" + facts.stepDownstream + ")"
                          : "an op that magnifies it (" + promised + ")";
  rec.status = RegionStatus::Kept;
  rec.detail =
      differ < 0
          ? "verified, but whether it rounds as ATen does was not measured "
            "(update kb-verify), and its result feeds " +
                where + ": the ATen ops stay"
          : formatv("verified, but its output differs from ATen's in the "
                    "last bits ({0} elements) and feeds {1}, which magnifies "
                    "that: the ATen ops stay",
                    differ, where)
                .str();
}

// The convolution rule: cuDNN runs fp32 convolutions in TF32 by default,
// which turns a last-bit difference in its input into ~1e-4 relative
// differences in its output (measured on the H200: ResNet-18 with fused
// training-mode batch norm, 6e-4 max error vs eager).
std::map<std::string, NumericsFacts> numericsFacts(mlir::ModuleOp module) {
  std::map<std::string, NumericsFacts> out;
  module.walk([&](KernelOp kernel) {
    NumericsFacts &f = out[kernel.getSymName().str()];
    f.stepInside = stepAfterInexact(kernel);
    f.anyStep = firstStepOp(kernel);
    f.singularInside = singularAfterNorm(kernel, false);
  });
  module.walk([&](LaunchOp launch) {
    NumericsFacts &f = out[launch.getKernel().str()];
    if (f.singularDownstream.empty())
      f.singularDownstream = singularDownstream(
          launch, module.lookupSymbol<KernelOp>(launch.getKernel()), module);
    firstDownstream(launch->getResults(), [&](mlir::Operation *user) {
      if (isConvolution(user))
        f.feedsConvolution = true;
      std::string step = stepOpName(user);
      if (auto other = dyn_cast<LaunchOp>(user))
        if (auto kernel = module.lookupSymbol<KernelOp>(other.getKernel()))
          step = firstStepOp(kernel);
      if (f.stepDownstream.empty())
        f.stepDownstream = step;
      return f.feedsConvolution && !f.stepDownstream.empty();
    });
  });
  return out;
}

std::optional<std::string> kernelUnderNumericsPolicy(KernelOp kernel,
                                                     EmittedKernel &k,
                                                     EmitOptions &options,
                                                     const NumericsFacts &facts,
                                                     bool fuseBeforeTF32) {
  std::optional<std::string> kept =
      keptByNumericsPolicy(k, facts, fuseBeforeTF32);
  if (!kept)
    return kept;
  // The policy keeps out last bits that differ from ATen's: the same
  // region in exact math may pass it (a pointwise kernel before a
  // convolution or a comparison is then exact), and so may its layer norm
  // or softmax in ATen's own order (before a step or singular op).
  EmitOptions exactMath = options;
  exactMath.fastMath = false;
  EmitOptions atenOrder = exactMath;
  atenOrder.atenOrderNorms = true;
  SmallVector<EmitOptions, 2> alternatives;
  if (k.approximate)
    alternatives.push_back(exactMath);
  if (hasAtenOrderReduction(kernel))
    alternatives.push_back(atenOrder);
  for (const EmitOptions &alt : alternatives) {
    auto e = emitKernel(kernel, alt);
    if (!e) {
      consumeError(e.takeError());
      continue;
    }
    if (keptByNumericsPolicy(*e, facts, fuseBeforeTF32))
      continue;
    k = std::move(*e);
    options = alt;
    return std::nullopt;
  }
  return kept;
}

std::optional<std::string> keptByNumericsPolicy(const EmittedKernel &k,
                                                const NumericsFacts &facts,
                                                bool fuseBeforeTF32) {
  // Pointwise kernels and max pooling round exactly as ATen does; sums,
  // norms and softmax only to within a few ulps, and --fast-math kernels
  // to within 2 ulps per approximate exp or division.
  // A layer norm in ATen's own order rounds as ATen's does too (kb-verify
  // confirms it: keepIfNotIdentical).
  bool exact = (k.kind == "pointwise" || k.kind == "pool" || k.atenOrder ||
                k.orderFree) &&
               !k.approximate;
  // In a --fast-math kernel every value may be off by an ulp or two.
  static const std::string none;
  const std::string &inside = k.approximate                ? facts.anyStep
                              : k.atenOrder || k.orderFree ? none
                                                           : facts.stepInside;
  if (!inside.empty())
    return "a " + k.kind + " followed inside the region by a step op (" +
           inside +
           "): a last-bit difference from ATen can flip its result, so the "
           "ATen ops stay";
  if (exact)
    return std::nullopt;
  const std::string &singular = !facts.singularInside.empty()
                                    ? facts.singularInside
                                    : facts.singularDownstream;
  if (!singular.empty())
    return "a " + k.kind + " whose values reach " + singular +
           " after a norm: the norm turns a last-bit difference from ATen "
           "into an absolute error near 0, where " +
           singular + "'s slope is unbounded, so the ATen ops stay";
  if (!facts.stepDownstream.empty())
    return "a " + k.kind + " whose result reaches a step op (" +
           facts.stepDownstream +
           "): a last-bit difference from ATen can flip its result, so the "
           "ATen ops stay";
  if (facts.feedsConvolution && !fuseBeforeTF32)
    return "a " + k.kind +
           " whose result feeds a TF32 convolution: its last-bit "
           "differences from ATen grow to ~1e-4 there, so the ATen "
           "ops stay (--fuse-before-tf32 fuses it anyway)";
  return std::nullopt;
}

} // namespace kb
