//===- Failure.cpp - Which kind of failure a driver stage reports ---------===//
#include "kb/Driver/Failure.h"

using namespace llvm;

char kb::driver::DriverError::ID = 0;

Error kb::driver::withKind(Error err, FailureKind kind) {
  if (!err || err.isA<DriverError>())
    return err;
  return failure(kind, toString(std::move(err)));
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
      [&](const ErrorInfoBase &e) { message = e.message(); });
  return {kind, message};
}
