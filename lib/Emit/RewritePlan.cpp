//===- RewritePlan.cpp - The names report.json gives states ---------------===//
#include "kb/Emit/RewritePlan.h"

#include "llvm/Support/ErrorHandling.h"

namespace kb {

llvm::StringRef statusName(RegionStatus status) {
  switch (status) {
  case RegionStatus::Verified:
    return "verified";
  case RegionStatus::Rejected:
    return "rejected";
  case RegionStatus::Unverified:
    return "unverified";
  case RegionStatus::CompileError:
    return "compile_error";
  case RegionStatus::NotGenerated:
    return "not_generated";
  case RegionStatus::Kept:
    return "kept";
  case RegionStatus::Slower:
    return "slower";
  }
  llvm_unreachable("unknown RegionStatus");
}

llvm::StringRef originName(KernelOrigin origin) {
  switch (origin) {
  case KernelOrigin::Codegen:
    return "codegen";
  case KernelOrigin::Model:
    return "model";
  case KernelOrigin::Store:
    return "store";
  }
  llvm_unreachable("unknown KernelOrigin");
}

} // namespace kb
