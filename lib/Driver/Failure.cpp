//===- Failure.cpp - Which kind of failure a driver stage reports ---------===//
#include "kb/Driver/Failure.h"

using namespace llvm;

char kb::driver::DriverError::ID = 0;

namespace {
/// An error the operating system reported (a file missing, unreadable or
/// not a regular file): what the user named cannot be read, so a usage
/// error whichever stage met it, the graph's or the C++ frontend's.
bool isSystemError(const ErrorInfoBase &e) {
  std::error_code ec = e.convertToErrorCode();
  return ec.category() == std::generic_category() ||
         ec.category() == std::system_category();
}
} // namespace

Error kb::driver::withKind(Error err, FailureKind kind) {
  if (!err || err.isA<DriverError>())
    return err;
  auto [taken, message] = takeFailure(std::move(err), kind);
  return failure(taken, message);
}

std::pair<kb::driver::FailureKind, std::string>
kb::driver::takeFailure(Error err, FailureKind fallback) {
  FailureKind kind = fallback;
  std::string message;
  handleAllErrors(
      std::move(err),
      [&](const DriverError &e) {
        kind = e.getKind();
        message = e.message();
      },
      [&](const ErrorInfoBase &e) {
        message = e.message();
        if (isSystemError(e))
          kind = FailureKind::Usage;
      });
  return {kind, message};
}
