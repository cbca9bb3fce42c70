//===- RowWriter.cpp - What a row plan's kernels write --------------------===//
//
// The writers every row kernel shares (RowPlan.h's RowWriter): the row's
// result by its leader, the per-element outputs of norms and softmax, the
// passes that re-read a row, and the shift of a norm's moments; and the
// loop over rows of lane groups the row kernels open.
//
//===----------------------------------------------------------------------===//

#include "RowPlan.h"

#include "kb/Transforms/OpUtils.h"

using namespace mlir;
using namespace kb;
using namespace kb::codegen;

/// One output per row: the row's leader (the block opened by `leader`)
/// writes the reduction's result and the recipe's extra outputs.
llvm::Error codegen::RowWriter::writeRowResult(const RowPlan &p,
                                               llvm::StringRef leader,
                                               llvm::raw_ostream &os) {
  e.newScope();
  if (p.statsOnly) {
    os << leader << p.leaderExtra << "    }\n";
    return llvm::Error::success();
  }
  os << leader << "      const " << resultType(f) << " red = " << p.prog.result
     << "; // " << displayName(f.op) << "\n";
  if (auto err = writeOutputs("r", os, "      "))
    return err;
  os << p.leaderExtra << "    }\n";
  e.newScope();
  return llvm::Error::success();
}

/// A pass over row r's elements: `head` opens the loop over c, `body`
/// writes what each element's value x gives.
static llvm::Error
writePass(RegionEmitter &e, const StageInfo &f, const RowPlan &p,
          llvm::StringRef head, llvm::raw_ostream &os,
          llvm::function_ref<llvm::Error(llvm::StringRef)> body) {
  os << head << "      const long long i = " << p.index("r", "c") << ";\n";
  e.newScope();
  seedRowCoordinates(e, p, "r");
  auto x = e.valueAt(f.input, "i", os, "      ");
  if (!x)
    return x.takeError();
  if (auto err = body(*x))
    return err;
  e.newScope();
  os << "    }\n";
  return llvm::Error::success();
}

llvm::Error codegen::RowWriter::writeElementPass(const RowPlan &p,
                                                 llvm::StringRef head,
                                                 llvm::raw_ostream &os,
                                                 bool toSlots) {
  return writePass(e, f, p, head, os, [&](llvm::StringRef x) {
    return writeElement(p, x, os, "      ", toSlots);
  });
}

llvm::Error codegen::RowWriter::writeStepPass(const RowPlan &p,
                                              llvm::StringRef head,
                                              llvm::StringRef step,
                                              llvm::raw_ostream &os) {
  return writePass(e, f, p, head, os, [&](llvm::StringRef x) {
    std::string s = step.str();
    for (size_t at; (at = s.find("{x}")) != std::string::npos;)
      s.replace(at, 3, x.str());
    os << s;
    return llvm::Error::success();
  });
}

/// Per-element outputs at index `i`, the input's element being `x`.
llvm::Error
codegen::RowWriter::writeElement(const RowPlan &p, llvm::StringRef x,
                                 llvm::raw_ostream &os, llvm::StringRef indent,
                                 bool toSlots, llvm::StringRef held) {
  auto red = !held.empty() && p.heldElement
                 ? llvm::Expected<std::string>(p.heldElement(held))
                 : p.element(x, os, indent);
  if (!red)
    return red.takeError();
  os << indent << "const float red = " << *red << "; // " << displayName(f.op)
     << "\n";
  // Broadcast back, the reduction's result is the row's at any element.
  if (f.rebroadcast)
    e.argNames[f.op->getResult(0)] = "red";
  // An output that is the input itself (a residual stream written next to
  // its norm) is the element in hand, not a re-read.
  e.seed(f.input, "i", x);
  return writeOutputs("i", os, indent, toSlots);
}

llvm::Error codegen::RowWriter::writeOutputs(llvm::StringRef idx,
                                             llvm::raw_ostream &os,
                                             llvm::StringRef indent,
                                             bool toSlots) {
  e.seed(f.op->getResult(0), idx, "red");
  for (auto [k, v] : llvm::enumerate(yield.getValues())) {
    auto y = e.valueAt(v, idx, os, indent);
    if (!y)
      return y.takeError();
    if (toSlots)
      os << indent << "ov" << k << "[j] = " << *y << ";\n";
    else
      os << indent << e.store(k, idx, *y) << "\n";
  }
  return llvm::Error::success();
}

/// Sums of x - k0 in double (k0 the row's first element) give both moments
/// in one pass without the cancellation of E[x^2] - E[x]^2.
llvm::Error codegen::RowWriter::writeShift(const RowPlan &p,
                                           llvm::StringRef lhs,
                                           llvm::raw_ostream &os,
                                           llvm::StringRef indent) {
  e.newScope();
  os << indent << "const long long ik = " << p.index("r", "0") << ";\n";
  auto x = e.valueAt(f.input, "ik", os, indent);
  if (!x)
    return x.takeError();
  // A non-finite first element would make every difference Inf/NaN.
  os << indent << lhs << " = isfinite(" << *x << ") ? (double)" << *x
     << " : 0.0;\n";
  e.newScope();
  return llvm::Error::success();
}

void codegen::openGroupRows(const RowPlan &p, int64_t L,
                            llvm::raw_ostream &os) {
  std::string Ls = std::to_string(L);
  os << "  const int lane = threadIdx.x & " << L - 1 << ";\n"
     << "  for (long long r0 = ((long long)blockIdx.x * 256 + (threadIdx.x & "
        "~31)) / "
     << Ls << "; r0 < " << p.rows << "LL;\n       r0 += (long long)gridDim.x * "
     << 256 / L << ") {\n"
     << "    const long long r = r0 + (threadIdx.x & 31) / " << Ls << ";\n"
     << "    const bool live = r < " << p.rows << "LL;\n";
}
