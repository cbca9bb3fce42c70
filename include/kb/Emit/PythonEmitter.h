//===- PythonEmitter.h - kb IR back to PyTorch calls ------------*- C++ -*-===//
//
// Turns the outlined `forward` function into Python that calls ATen through
// torch.ops.aten (so anchors keep cuBLAS/cuDNN, with exactly the traced
// arguments) and each kb.launch through the runtime, and each kernel's body
// into a Python reference function (the guard and autograd fallback).
//
//===----------------------------------------------------------------------===//
#ifndef KB_EMIT_PYTHONEMITTER_H
#define KB_EMIT_PYTHONEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <map>
#include <set>
#include <string>

namespace kb {

struct PythonProgram {
  /// def _kb_forward(self, K, a0, a1, ...): the whole graph; K.call(i, args)
  /// runs region i (by its index in `regionIndex`).
  std::string forward;
  /// def _kb_region_N_reference(in0, ...): one per kernel, in module order.
  std::string references;
  /// The same, one entry per kernel symbol (the region as PyTorch calls,
  /// for prompts).
  std::map<std::string, std::string> referenceOf;
  /// _opN_<name> = kb_runtime.OpCall(ns, name): the call sites used above.
  std::string sites;
  /// def _kb_lib_N(<anchor operands>): the library form of region N, where
  /// one exists (LibraryEpilogue.h); the forward calls K.lib(N, ...) there.
  std::string libraryHelpers;
  /// Per kernel symbol with a library form: what runs it, and the call.
  std::map<std::string, std::pair<std::string, std::string>> library;
  /// Kernels of `channelsLast` whose convolution goes through K.cl (the
  /// others' variants could only ever fail their guards).
  std::set<std::string> channelsLast;
  /// Kernels of `convert` whose convolution goes through K.cl: in the
  /// channels-last layout the runtime makes the convolution's output
  /// contiguous for the NCHW kernel.
  std::set<std::string> convert;
  unsigned numArgs = 0;
};

/// `regionIndex` maps kernel symbol names to the runtime's region indices.
/// Fails, naming the op and its location, on an op with no Python form
/// (control flow blocks, non-scalar tensor literals).
/// Kernels in `channelsLast` have a channels-last variant: a convolution
/// feeding only such a launch, whose results are only returned, gets its
/// input and weight through K.cl(i, t) (a channels-last copy when the
/// runtime chose that layout, else t itself). Variants in `readsOnly`
/// return NCHW tensors, so their results may have any consumer. Kernels in
/// `convert` have no variant: their convolution (with no library form)
/// goes through K.cl too, and the runtime makes its output contiguous
/// before the kernel, so their results may have any consumer.
llvm::Expected<PythonProgram>
emitPython(mlir::ModuleOp module,
           const std::map<std::string, unsigned> &regionIndex,
           const std::set<std::string> &channelsLast = {},
           const std::set<std::string> &readsOnly = {},
           const std::set<std::string> &convert = {});

} // namespace kb

#endif // KB_EMIT_PYTHONEMITTER_H
