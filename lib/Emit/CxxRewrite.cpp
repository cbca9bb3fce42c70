//===- CxxRewrite.cpp - Fused calls for libtorch C++ chains ---------------===//

#include "kb/Emit/CxxRewrite.h"
#include "kb/CodeGen/CxxKernel.h"
#include "kb/CodeGen/Prelude.h"
#include "kb/IR/OpSemantics.h"
#include "kb/Import/CxxImporter.h"
#include "kb/Support/InputFile.h"
#include "kb/Transforms/Passes.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <cstdio>
#include <functional>
#include <set>

using llvm::formatv;
using llvm::StringRef;

namespace kb {
namespace {

/// A fused function's section in kb_kernels.h and .cu, so that a later run
/// into the same files keeps the functions it does not generate again.
std::string beginMark(llvm::StringRef name) {
  return "// kb-rewrite: begin " + name.str() + "\n";
}
std::string endMark(llvm::StringRef name) {
  return "// kb-rewrite: end " + name.str() + "\n";
}

/// The chain's place, by file name only: generated files stay the same
/// wherever the sources are checked out.
std::string where(const CxxChain &c) {
  return formatv("{0}:{1} in {2}: {3}", llvm::sys::path::filename(c.file),
                 c.anchor.line, c.function, c.summary());
}

} // namespace

namespace {
std::string signatureOf(const CxxRewritePlan &p) {
  std::string key = p.writesInput ? "inplace;" : "out;";
  for (const CxxPlanOp &op : p.ops) {
    key += op.op + "." + op.overload + (op.inPlace ? "_" : "") +
           (op.selfBack != 1 ? "@" + std::to_string(op.selfBack) : "") +
           (op.chainArg ? "#" + std::to_string(op.chainArg) : "") + "(";
    if (op.module >= 0) {
      key += p.operands[op.module].type;
      for (const auto &[name, idx] : op.named)
        key += " " + name;
      for (const auto &[name, val] : op.pinned)
        key += " " + name + "=" + val;
    }
    for (int idx : op.args)
      key += idx < 0 ? std::string("-")
             : p.operands[idx].kind == CxxOperand::Value
                 ? "@" + std::to_string(p.operands[idx].back)
             : p.operands[idx].kind == CxxOperand::String ||
                     p.operands[idx].kind == CxxOperand::Int ||
                     p.operands[idx].kind == CxxOperand::Bool ||
                     p.operands[idx].kind == CxxOperand::IntList
                 ? p.operands[idx].text
                 : std::to_string(idx) +
                       (p.operands[idx].kind == CxxOperand::Tensor ? "t" : "s");
    key += ")";
  }
  return key;
}
} // namespace

std::string cxxFusedName(const CxxRewritePlan &p, bool approximate) {
  std::string key = signatureOf(p) + (approximate ? ";fast-math" : "");
  char buf[32];
  std::snprintf(buf, sizeof buf, "kb_fused_%08llx",
                (unsigned long long)(llvm::xxh3_64bits(key) & 0xffffffffULL));
  return buf;
}

llvm::Expected<CxxRewriteOutput>
rewriteCxx(const CxxAnalysis &analysis,
           const std::map<std::string, std::string> &includeFor,
           bool fastMath) {
  CxxRewriteOutput out;
  std::map<std::string, clang::tooling::Replacements> reps;
  std::map<std::string, unsigned> firstEdit;
  std::set<std::string> defined;
  std::string decls, defs;
  bool usesModules = false; // the header then needs torch::nn's classes
  const std::vector<CxxChain> &chains = analysis.chains;
  // Every plan's function name first: a Sequential call's edit holds the
  // calls of the chains between its anchors (CxxRewritePlan::nested).
  std::vector<std::string> names(chains.size());
  std::vector<bool> approx(chains.size()), used(chains.size());
  // Every plan as the kb dialect, classified as the graph path classifies:
  // the kernels' element expressions come from this IR.
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ctx.loadDialect<KbDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
  std::vector<ImportedChain> irs(chains.size());
  for (auto [i, c] : llvm::enumerate(chains))
    if (c.plan.whyNot.empty())
      irs[i] = importCxxChain(*module, c, "chain_" + std::to_string(i));
  mlir::PassManager pm(&ctx);
  pm.addPass(createClassify());
  if (mlir::failed(pm.run(*module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kb-classify failed on the C++ chains");
  for (auto [i, c] : llvm::enumerate(chains)) {
    const CxxRewritePlan &p = c.plan;
    if (!p.whyNot.empty())
      continue;
    // Under --fast-math a chain with an approximate helper is another
    // function than its exact form (name, lock); one without stays exact.
    bool approximate = false;
    if (fastMath) {
      auto probe = codegen::emitCxxFunction(c, irs[i], "kb_probe", "", true);
      if (!probe)
        return probe.takeError();
      approximate = probe->approximate;
    }
    approx[i] = approximate;
    names[i] = cxxFusedName(p, approximate);
  }
  auto callOf = [&](size_t i, const std::string &input) {
    std::string call = "kb_rewrite::" + names[i] + "(" + input;
    for (const CxxOperand &o : chains[i].plan.operands)
      if (o.kind == CxxOperand::Tensor || o.kind == CxxOperand::Scalar ||
          o.kind == CxxOperand::Module)
        call += ", " + o.text;
    return call + ")";
  };
  // `text` with each placeholder replaced by that chain's call, or by its
  // items' own calls when it has no function; `fused` set when a call is.
  std::function<std::string(StringRef, bool &)> fill =
      [&](StringRef text, bool &fused) -> std::string {
    std::string r;
    while (!text.empty()) {
      size_t a = text.find('\x01');
      r += text.take_front(a).str();
      if (a == StringRef::npos)
        break;
      size_t b = text.find('\x01', a + 1);
      size_t n = 0;
      if (b == StringRef::npos || text.slice(a + 1, b).getAsInteger(10, n) ||
          n >= chains.size()) { // not a mark (emitSegments writes them)
        r += text.drop_front(a).str();
        break;
      }
      if (!names[n].empty()) {
        used[n] = fused = true;
        r += callOf(n, fill(chains[n].plan.input, fused));
      } else {
        r += fill(chains[n].plan.unrolled, fused);
      }
      text = text.drop_front(b + 1);
    }
    return r;
  };
  auto edit = [&](const CxxChain &c, unsigned begin, unsigned end,
                  const std::string &text) -> llvm::Error {
    clang::tooling::Replacement r(c.file, begin, end - begin, text);
    if (auto err = reps[c.file].add(r))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          formatv(
              "{0}:{1}: conflicting replacements ({2}); nothing was written",
              c.file, c.anchor.line, llvm::toString(std::move(err))));
    auto [it, fresh] = firstEdit.emplace(c.file, begin);
    if (!fresh)
      it->second = std::min(it->second, begin);
    return llvm::Error::success();
  };
  for (auto [i, c] : llvm::enumerate(chains)) {
    const CxxRewritePlan &p = c.plan;
    if (p.nested)
      continue;
    if (names[i].empty()) {
      // Not rewritten itself: the Sequential call it starts at may still
      // hold rewritten chains between its anchors.
      bool fused = false;
      if (p.seqEnd > p.seqBegin) {
        std::string text = fill(p.seqUnrolled, fused);
        if (fused)
          if (auto err = edit(c, p.seqBegin, p.seqEnd, text))
            return std::move(err);
      }
      continue;
    }
    used[i] = true;
    bool fused = false;
    // Only a Sequential's texts hold marks (emitSegments).
    std::string call =
        p.wrapOpen +
        callOf(i, p.inputReadsItems ? fill(p.input, fused) : p.input) +
        p.wrapClose;
    if (auto err = edit(c, p.begin, p.end, p.prefix + call + p.suffix))
      return std::move(err);
    for (auto [b, e] : p.removals)
      if (auto err = edit(c, b, e, ""))
        return std::move(err);
  }
  out.functions.assign(chains.size(), "");
  for (auto [i, c] : llvm::enumerate(chains)) {
    const CxxRewritePlan &p = c.plan;
    if (!used[i])
      continue;
    const std::string &name = names[i];
    usesModules |= p.inputReadsItems; // a last segment's wrap too
    for (const CxxOperand &o : p.operands)
      usesModules |= o.kind == CxxOperand::Module;
    if (defined.insert(name).second) {
      auto fn = codegen::emitCxxFunction(c, irs[i], name, where(c), approx[i]);
      if (!fn)
        return fn.takeError();
      decls += beginMark(name) + fn->decl + endMark(name) + "\n";
      defs += beginMark(name);
      size_t defsStart = defs.size();
      defs += fn->def;
      // The hash skips the first comment line (where the chain was found):
      // moving code around does not change the kernel.
      StringRef text = StringRef(defs).drop_front(defsStart);
      text = text.drop_until([](char ch) { return ch == '\n'; });
      char hash[32];
      std::snprintf(hash, sizeof hash, "xxh3:%016llx",
                    (unsigned long long)llvm::xxh3_64bits(text));
      defs += endMark(name);
      std::string chain; // the ops replaced (a partial plan: its last ones)
      for (const CxxPlanOp &o : p.ops)
        chain += (chain.empty() ? "" : " -> ") + o.op + (o.inPlace ? "_" : "");
      out.lock[name] = {
          signatureOf(p) + (approx[i] ? ";fast-math" : ""), hash, chain,
          formatv("{0}:{1} in {2}", llvm::sys::path::filename(c.file),
                  c.anchor.line, c.function)};
    }
    out.functions[i] = name;
    ++out.rewritten;
  }

  for (auto &[file, fileReps] : reps) {
    auto buf = readInputFile(file);
    if (!buf)
      return buf.takeError();
    StringRef code = (*buf)->getBuffer();
    // The include goes after the last #include before the first edit.
    size_t insertAt = 0;
    for (size_t pos = 0; pos < firstEdit[file] && pos < code.size();) {
      size_t eol = code.find('\n', pos);
      StringRef line =
          code.slice(pos, eol == StringRef::npos ? code.size() : eol);
      if (line.ltrim().starts_with("#include"))
        insertAt = eol == StringRef::npos ? code.size() : eol + 1;
      if (eol == StringRef::npos)
        break;
      pos = eol + 1;
    }
    auto inc = includeFor.find(file);
    std::string spelling =
        inc == includeFor.end() ? "kb_kernels.h" : inc->second;
    std::string text =
        "#include \"" + spelling + "\" // kb-rewrite: fused kernels\n";
    if (insertAt == code.size() && !code.empty() && code.back() != '\n')
      text = "\n" + text;
    if (auto err =
            fileReps.add(clang::tooling::Replacement(file, insertAt, 0, text)))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     file + ": " +
                                         llvm::toString(std::move(err)));
    auto rewritten = clang::tooling::applyAllReplacements(code, fileReps);
    if (!rewritten)
      return rewritten.takeError();
    out.files[file] = *rewritten;
  }

  out.decls = std::move(decls);
  out.defs = std::move(defs);
  out.usesModules = usesModules;
  assembleCxxKernels(out);
  return out;
}

/// Item `i` of a torch::nn::Sequential of `n` items as its class, for
/// chains rewritten through one: a list changed since the rewrite (another
/// module at `i`, items added) stops with this error instead of running
/// the wrong modules.
static const char *kItemHelper =
    "template <typename T>\n"
    "T &kb_item(const torch::nn::Sequential &s, size_t i, size_t n) {\n"
    "  TORCH_CHECK(s->size() == n, \"kb-rewrite: a Sequential rewritten with "
    "\", "
    "n,\n"
    "              \" modules has \", s->size(), \"; run kb-rewrite again\");\n"
    "  T *m = s->ptr(i)->template as<T>();\n"
    "  TORCH_CHECK(m, \"kb-rewrite: module \", i, \" of a Sequential is no \"\n"
    "              \"longer a \", c10::demangle_type<T>(), \"; run kb-rewrite "
    "\"\n"
    "              \"again\");\n"
    "  return *m;\n"
    "}\n\n";

void assembleCxxKernels(CxxRewriteOutput &out) {
  out.header =
      "// Generated by kb-rewrite: fused pointwise chains of libtorch C++ "
      "code.\n"
      "// Each function runs one CUDA kernel when its guards hold and the\n"
      "// chain's original ATen ops otherwise (also when autograd needs "
      "them).\n"
      "#pragma once\n#include <ATen/ATen.h>\n" +
      std::string(out.usesModules ? "#include <torch/nn.h>\n" : "") +
      "\nnamespace kb_rewrite {\n\n" +
      std::string(out.usesModules ? kItemHelper : "") + out.decls +
      "namespace testing {\n"
      "/// For kb-verify --cxx: run every function's original ATen ops, and\n"
      "/// count the fused kernels launched.\n"
      "bool &forceReference();\nunsigned long long &fusedLaunches();\n"
      "} // namespace testing\n\n} // namespace kb_rewrite\n";
  out.source =
      "// Generated by kb-rewrite (see kb_kernels.h).\n"
      "#include \"kb_kernels.h\"\n\n#include <ATen/cuda/CUDAContext.h>\n"
      "#include <c10/core/GradMode.h>\n#include "
      "<c10/cuda/CUDAException.h>\n#include <c10/cuda/CUDAGuard.h>\n"
      // The prelude's kb::addcmul rounds as the torch it is built against.
      "#if __has_include(<torch/version.h>)\n#include <torch/version.h>\n"
      "#endif\n\n" +
      cudaPrelude().str() + "\n" + codegen::cxxKernelSupport().str() +
      "\nnamespace kb_rewrite {\n\n" +
      "namespace testing {\n"
      "bool &forceReference() {\n  static bool force = false;\n"
      "  return force;\n}\n"
      "unsigned long long &fusedLaunches() {\n"
      "  static unsigned long long n = 0;\n  return n;\n}\n"
      "} // namespace testing\n\n" +
      out.defs + "} // namespace kb_rewrite\n";
}

unsigned keepEarlierKernels(CxxRewriteOutput &out, StringRef header,
                            StringRef source) {
  // Sections of the earlier files, by function: decls from the header,
  // definitions from the source; a function this run generates again is
  // this run's.
  auto sections = [](StringRef text) {
    std::map<std::string, std::string> found;
    StringRef begin = "// kb-rewrite: begin ";
    for (size_t pos = text.find(begin); pos != StringRef::npos;
         pos = text.find(begin, pos + 1)) {
      size_t nameEnd = text.find('\n', pos);
      if (nameEnd == StringRef::npos)
        break;
      std::string name = text.slice(pos + begin.size(), nameEnd).trim().str();
      std::string end = endMark(name);
      size_t stop = text.find(end, nameEnd);
      if (stop == StringRef::npos)
        break; // a cut file: what follows is not a whole section
      found[name] = text.slice(pos, stop + end.size()).str();
    }
    return found;
  };
  std::map<std::string, std::string> decls = sections(header),
                                     defs = sections(source);
  std::set<std::string> now(out.functions.begin(), out.functions.end());
  unsigned kept = 0;
  for (const auto &[name, decl] : decls) {
    auto def = defs.find(name);
    if (now.count(name) || def == defs.end())
      continue;
    out.decls += decl + "\n";
    out.defs += def->second;
    ++kept;
  }
  if (header.contains("#include <torch/nn.h>"))
    out.usesModules = true;
  assembleCxxKernels(out);
  return kept;
}

std::string cxxLockJson(const CxxRewriteOutput &out) {
  llvm::json::Object kernels;
  for (const auto &[name, e] : out.lock) {
    llvm::json::Object k{{"signature", e.signature}, {"source_hash", e.hash},
                         {"origin", "codegen"},      {"verdict", e.verdict},
                         {"chain", e.chain},         {"first_seen_at", e.where}};
    if (!e.evidence.empty()) {
      llvm::json::Object ev;
      for (const char *key : {"cases", "fused_cases", "fallback_cases",
                              "skipped_shapes", "max_err", "detail"})
        if (const llvm::json::Value *v = e.evidence.get(key))
          ev[key] = *v;
      k["evidence"] = std::move(ev);
    }
    kernels[name] = std::move(k);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << formatv(
      "{0:2}",
      llvm::json::Value(llvm::json::Object{
          {"schema_version", 1},
          {"toolchain", llvm::json::Object{{"kb_rewrite", "0.1.0"},
                                           {"llvm", LLVM_VERSION_STRING}}},
          {"kernels", std::move(kernels)}}));
  return text + "\n";
}

std::set<std::string> lockedRejections(StringRef lockText) {
  std::set<std::string> out;
  auto parsed = llvm::json::parse(lockText);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return out; // checkCxxLock reports it
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Object *kernels =
      root ? root->getObject("kernels") : nullptr;
  if (!kernels)
    return out;
  for (const auto &[name, e] : *kernels)
    if (const llvm::json::Object *k = e.getAsObject())
      if (k->getString("verdict").value_or("") == "rejected")
        out.insert(name.str());
  return out;
}

llvm::Error checkCxxLock(StringRef lockPath, StringRef lockText,
                         const CxxRewriteOutput &out) {
  auto parsed = llvm::json::parse(lockText);
  if (!parsed)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        lockPath + ": not a lock file: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *kernels =
      parsed->getAsObject() ? parsed->getAsObject()->getObject("kernels")
                            : nullptr;
  if (!kernels)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   lockPath + ": no \"kernels\" object");
  std::string problems;
  for (const auto &[name, e] : out.lock) {
    const llvm::json::Object *k = kernels->getObject(name);
    if (!k)
      problems += "\n  " + name + " (" + e.where + ": " + e.chain +
                  ") is not in the lock";
    else if (k->getString("source_hash").value_or("") != e.hash)
      problems += "\n  " + name + " (" + e.where +
                  "): the generated source "
                  "differs from the locked one (" +
                  k->getString("source_hash").value_or("?").str() + " vs " +
                  e.hash + ")";
  }
  if (problems.empty())
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      lockPath +
          ": the rewrite does not match the lock file; nothing was "
          "written (run with --update-lock to accept the new kernels):" +
          problems);
}

std::string cxxRewriteJson(const CxxAnalysis &analysis,
                           const CxxRewriteOutput &out,
                           const std::vector<std::string> &written) {
  llvm::json::Array chains;
  for (size_t i = 0; i < analysis.chains.size(); ++i) {
    const CxxChain &c = analysis.chains[i];
    std::string fn = i < out.functions.size() ? out.functions[i] : "";
    llvm::json::Array ops;
    for (const CxxOpSite &o : c.ops)
      ops.push_back(o.op + (o.inPlace ? "_" : ""));
    llvm::json::Object o{{"file", c.file},
                         {"function", c.function},
                         {"line", c.anchor.line},
                         {"anchor", c.anchor.op},
                         {"ops", std::move(ops)},
                         {"summary", c.summary()},
                         {"action", fn.empty() ? "left" : "rewritten"}};
    if (fn.empty())
      o["reason"] = c.plan.whyNot;
    else
      o["fused"] = fn;
    if (!fn.empty() && !c.plan.partial.empty())
      o["partial"] = c.plan.partial;
    chains.push_back(std::move(o));
  }
  llvm::json::Array skipped;
  for (const CxxSkip &s : analysis.skipped)
    skipped.push_back(llvm::json::Object{{"file", s.file},
                                         {"function", s.function},
                                         {"line", s.line},
                                         {"reason", s.reason}});
  llvm::json::Array files;
  for (const std::string &w : written)
    files.push_back(w);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                             {"chains", std::move(chains)},
                             {"skipped", std::move(skipped)},
                             {"rewritten", out.rewritten},
                             {"written", std::move(files)}}));
  return text + "\n";
}

} // namespace kb
