//===- OpTemplate.h - The op table's CUDA templates, expanded -*- C++ -*-===//
//
// OpSemantics.def gives each elementwise op a CUDA expression over its
// operands ("kb::clamp({self}, {min}, {max})"). Both code paths expand it
// here: the graph emitter (its operands are values of the region) and the
// C++ rewriter (its operands are the chain's variables), so the two agree
// on literals, absent bounds and substitution.
//
//===----------------------------------------------------------------------===//
#ifndef KB_CODEGEN_OPTEMPLATE_H
#define KB_CODEGEN_OPTEMPLATE_H

#include "kb/IR/OpSemantics.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace kb::codegen {

/// A float constant as CUDA source: 9 significant digits (exact for a
/// float), `kb::inf()` / `(-kb::inf())` for infinities, a NaN's bits.
std::string floatLiteral(double v);
/// A double constant, exact (17 digits), for double math.
std::string doubleLiteral(double v);

/// `tmpl` with each `{name}` of `names[k]` replaced by `valueOf(k)`. Only
/// the names the template holds are asked for, in the order of `names`
/// (so the first failing operand is the one reported); substituted text
/// is not scanned again. Braces naming nothing in `names` stay.
llvm::Expected<std::string>
expandTemplate(llvm::StringRef tmpl, llvm::ArrayRef<std::string> names,
               llvm::function_ref<llvm::Expected<std::string>(size_t)> valueOf);

/// expandTemplate over `row`'s CUDA expression and its operands' names.
llvm::Expected<std::string>
expandTemplate(const OpInfo &row,
               llvm::function_ref<llvm::Expected<std::string>(size_t)> valueOf);

/// The value an absent (None) operand takes in a template: an absent
/// optional string option is '\0', an absent upper bound of a clamp-like
/// op +inf, a lower one -inf; nullopt where absence has no meaning.
std::optional<std::string> absentOperand(const ArgSpec &arg);

} // namespace kb::codegen

#endif // KB_CODEGEN_OPTEMPLATE_H
