//===- NumericsPolicy.h - Which fused kernels may replace ATen's --*- C++
//-*-===//
//
// A kernel whose last bits differ from ATen's is kept out where a step op,
// a singular op after a norm or a TF32 convolution downstream would
// magnify the difference past 1e-4 (docs/rewrite.md, "Numerics policy").
//
//===----------------------------------------------------------------------===//
#ifndef KB_DRIVER_NUMERICSPOLICY_H
#define KB_DRIVER_NUMERICSPOLICY_H

#include "kb/CodeGen/KernelEmitter.h"
#include "kb/Emit/RewritePlan.h"
#include "kb/IR/KbDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <string>

namespace kb {

/// What the numerics policy weighs for one outlined kernel.
struct NumericsFacts {
  bool feedsConvolution = false; // its results reach a (TF32) convolution
  std::string stepDownstream;    // a step op its results reach ("" = none)
  std::string stepInside;        // a step op after an inexact op inside it
  std::string anyStep;           // any step op inside it
  // A singular op (sqrt, log, ...) reading a centring norm's result, inside
  // the kernel or downstream of it ("" = none).
  std::string singularInside, singularDownstream;
};
/// Per outlined kernel (kb_region_N), through any ops and other kernels
/// downstream; step ops are the KB_STEP_OP rows of OpSemantics.def.
std::map<std::string, NumericsFacts> numericsFacts(mlir::ModuleOp module);

/// Why a generated kernel keeps its region's ATen ops by the numerics policy,
/// or nothing when it may be used.
std::optional<std::string> keptByNumericsPolicy(const EmittedKernel &k,
                                                const NumericsFacts &facts,
                                                bool fuseBeforeTF32);

/// keptByNumericsPolicy for `k` (emitted from `kernel` with `options`),
/// trying the region again in exact math, then with its layer norm or
/// softmax in ATen's own order: the first that passes replaces `k` and
/// `options`; the first kernel's reason when none does.
std::optional<std::string> kernelUnderNumericsPolicy(KernelOp kernel,
                                                     EmittedKernel &k,
                                                     EmitOptions &options,
                                                     const NumericsFacts &facts,
                                                     bool fuseBeforeTF32);

/// After verification: a kernel let in on the promise of ATen's bits
/// (pointwise, pooling, ATen's order, order-free) before a TF32
/// convolution, a step or a singular op is kept out (RegionStatus::Kept)
/// unless kb-verify found every output bit equal to eager's.
void keepIfNotIdentical(RegionRecord &rec, const NumericsFacts &facts,
                        bool fuseBeforeTF32);

/// Whether `kernel` holds a step op or a singular op (another layout's
/// rounding could flip or magnify it).
bool hasStepOrSingularOp(KernelOp kernel);

} // namespace kb

#endif // KB_DRIVER_NUMERICSPOLICY_H
