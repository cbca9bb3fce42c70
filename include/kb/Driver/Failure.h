//===- Failure.h - Which kind of failure a driver stage reports --*- C++
//-*-===//
//
// kb-rewrite's exit codes (docs/cli.md) sort failures into three kinds; a
// stage says which one it met by returning a DriverError, so the tool
// never reads the kind back out of a message's wording.
//
//===----------------------------------------------------------------------===//
#ifndef KB_DRIVER_FAILURE_H
#define KB_DRIVER_FAILURE_H

#include "llvm/Support/Error.h"

#include <string>
#include <utility>

namespace kb::driver {

/// The values are the exit codes.
enum class FailureKind {
  /// Wrong arguments, an unreadable or unwritable file.
  Usage = 1,
  /// Malformed or unsupported input (the message names file:line).
  Input = 2,
  /// A pass, the verifier or an invariant failed: a bug to report.
  Internal = 3
};

class DriverError : public llvm::ErrorInfo<DriverError> {
public:
  static char ID;
  DriverError(FailureKind kind, std::string message)
      : kind(kind), text(std::move(message)) {}
  FailureKind getKind() const { return kind; }
  void log(llvm::raw_ostream &os) const override { os << text; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  FailureKind kind;
  std::string text;
};

inline llvm::Error failure(FailureKind kind, const llvm::Twine &message) {
  return llvm::make_error<DriverError>(kind, message.str());
}

/// `err` as a DriverError: one already is kept, one the operating system
/// reported (a std::error_code of the generic or system category: a file
/// missing or unreadable) becomes a usage error, any other one of `kind`
/// (what a stage's callee failing means there); success stays.
llvm::Error withKind(llvm::Error err, FailureKind kind);

/// Consumes `err` (not success): its message and the kind it carries, as
/// withKind sorts it (`fallback` for errors of other types).
std::pair<FailureKind, std::string> takeFailure(llvm::Error err,
                                                FailureKind fallback);

} // namespace kb::driver

#endif // KB_DRIVER_FAILURE_H
