//===- CxxKernelParts.h - Pieces of a C++ chain's fused function -*- C++
//-*-===//
//
// Shared by the pointwise form (CxxKernel.cpp) and the stage form
// (CxxStages.cpp: a reduction, softmax or pooling with pointwise ops before
// and after it) of a C++ chain's fused function.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_CODEGEN_CXXKERNELPARTS_H
#define KB_LIB_CODEGEN_CXXKERNELPARTS_H

#include "kb/CodeGen/CxxKernel.h"
#include "kb/Import/CxxImporter.h"

#include <string>
#include <vector>

namespace kb::codegen::cxx {

/// The C++ name of operand `idx` inside the fused function ("a3", "s4",
/// "m0", a string literal).
std::string operandName(const CxxRewritePlan &p, int idx);
bool isTensor(const CxxOperand &o);
/// The result of op `j` under `prefix` ("t" in the element function, "r" in
/// the fallback), or the chain's input `in` when j < 0.
std::string valueName(int j, llvm::StringRef prefix, llvm::StringRef in);
/// Ops [begin, end) of the chain as `const float tK = ...;` lines over the
/// element function's parameters, from the chain's classified IR `ir`;
/// with `fast`, approximate helpers where --fast-math has them (setting
/// `approximate` when one is called).
llvm::Expected<std::string> elementOps(const CxxRewritePlan &p,
                                       const ImportedChain &ir, size_t begin,
                                       size_t end, bool fast,
                                       bool &approximate);
/// The chain through ATen, exactly as written: the guards' fallback.
std::string referenceBody(const CxxRewritePlan &p);

/// What the chain's operands make of the function: the element function's
/// parameters, the kernels' parameters and arguments, the guards.
struct ChainParts {
  /// The element function's parameters (`float x, float v1, float s2`),
  /// and its arguments at linear index `i` of the input (after `in[i]`).
  std::string eparams, scalarArgs;
  /// Kernel parameters and the host's arguments for them (after the
  /// kernel's own), per tensor operand (broadcast descriptors, per-channel
  /// arrays) and number.
  std::string kparams, kargs;
  /// The float4 kernel's operand loads and per-lane arguments, and what
  /// it needs beyond aligned whole float4s.
  std::string loads4, vecGuards;
  std::vector<std::string> laneArgs;
  /// Host statements: operand guards, module guards, module state read
  /// into locals; `tensors` lists what autograd might need.
  std::string guards, tensors, moduleGuards, derived;
  /// A module's per-channel tensors are read: `ch` computed from the
  /// element's index (`chLine` for `i`, `chLine4` for float4 `q`).
  bool perChannel = false;
  std::string chLine, chLine4;
  /// The numbers only, for the ops after a stage: parameters and the
  /// kernels' names for them.
  std::string postParams, postArgs;
  /// The function's parameter list, with its parentheses.
  std::string sig;
};
ChainParts chainParts(const CxxRewritePlan &p);

/// The host function `sig` of a chain: `literals` (a stage's constants),
/// the chain's ATen ops as the fallback, the guards of `c`,
/// `beforeDevice` (a stage's geometry and output), the device guard,
/// `afterDevice` (a pointwise chain's output), then pointers, the
/// `launch` statements and the launch bookkeeping.
std::string hostFunction(const CxxRewritePlan &p, const ChainParts &c,
                         llvm::StringRef sig, llvm::StringRef literals,
                         llvm::StringRef beforeDevice,
                         llvm::StringRef afterDevice, llvm::StringRef launch);

/// The fused function of a chain through a stage (plan.stage >= 0).
llvm::Expected<CxxFunction> emitStageFunction(const CxxRewritePlan &p,
                                              const ImportedChain &ir,
                                              const std::string &name,
                                              llvm::StringRef where, bool fast);

} // namespace kb::codegen::cxx

#endif // KB_LIB_CODEGEN_CXXKERNELPARTS_H
