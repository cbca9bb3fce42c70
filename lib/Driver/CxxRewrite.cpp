//===- CxxRewrite.cpp - `kb-rewrite rewrite` over libtorch C++ ------------===//
#include "kb/Driver/CxxRewrite.h"
#include "kb/Driver/Failure.h"

#include "kb/Emit/CxxRewrite.h"
#include "kb/Emit/CxxVerifyHarness.h"
#include "kb/Emit/FileTransaction.h"
#include "kb/Emit/Files.h"
#include "kb/Verify/Client.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace llvm;

namespace kb::driver {
namespace {

/// kb-verify --cxx over the generated files in a scratch directory: the
/// verdict of every fused function, by name.
Expected<std::map<std::string, verify::CxxVerdict>>
verifyFunctions(StringRef kbVerify, const CxxAnalysis &analysis,
                const CxxRewriteOutput &out) {
  SmallString<256> dir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("kb-cxx-verify", dir))
    return failure(FailureKind::Usage,
                   "cannot create a scratch directory: " + ec.message());
  for (auto [name, text] :
       {std::pair<const char *, std::string>("kb_kernels.h", out.header),
        {"kb_kernels.cu", out.source},
        {"kb_verify_harness.cpp", cxxVerifyHarness(analysis, out)}})
    if (Error err = writeFileAtomic(dir, name, text))
      return withKind(std::move(err), FailureKind::Usage);
  SmallString<256> outPath(dir), errPath(dir);
  sys::path::append(outPath, "verdicts.jsonl");
  sys::path::append(errPath, "kb-verify.log");
  auto verdicts = verify::verifyCxxSources(kbVerify, dir, outPath, errPath);
  if (!verdicts)
    return withKind(verdicts.takeError(), FailureKind::Internal);
  std::map<std::string, verify::CxxVerdict> byName;
  for (verify::CxxVerdict &v : *verdicts)
    byName[v.function] = std::move(v);
  sys::fs::remove_directories(dir);
  return byName;
}

/// Where each input lands, and how it spells the generated header.
struct Layout {
  std::string kernelsDir;
  std::string header; // <kernelsDir>/kb_kernels.h
  std::map<std::string, std::string> includeFor;
  std::string target(const CxxRewriteOptions &opts, StringRef file) const {
    if (opts.inPlace)
      return file.str();
    SmallString<256> p(opts.outDir);
    sys::path::append(p, sys::path::filename(file));
    return p.str().str();
  }
};

Layout layoutFor(const CxxRewriteOptions &opts, const CxxAnalysis &analysis) {
  Layout l;
  l.kernelsDir = opts.outDir;
  if (opts.inPlace) {
    SmallString<256> d(opts.inputs.files.front());
    sys::fs::make_absolute(d);
    l.kernelsDir = sys::path::parent_path(d).str();
  }
  SmallString<256> header(l.kernelsDir);
  sys::path::append(header, "kb_kernels.h");
  l.header = header.str().str();
  for (const CxxChain &c : analysis.chains) {
    SmallString<256> dir(c.file);
    sys::fs::make_absolute(dir);
    sys::path::remove_filename(dir);
    l.includeFor[c.file] =
        (!opts.inPlace || dir == l.kernelsDir) ? "kb_kernels.h" : l.header;
  }
  return l;
}

/// Runs kb-verify where it can and takes out every function it rejected
/// (regenerating `out`); the verdicts by function name.
Expected<std::map<std::string, verify::CxxVerdict>>
verifyAndDrop(const CxxRewriteOptions &opts, VerifyMode verify,
              CxxAnalysis &analysis, const Layout &layout,
              Expected<CxxRewriteOutput> &out) {
  const bool gpu = verify::gpuPresent();
  if (verify == VerifyMode::On && (!gpu || opts.kbVerify.empty()))
    return failure(FailureKind::Input,
                   std::string("--verify on needs ") +
                       (gpu ? "kb-verify (pass --kb-verify PATH)"
                            : "a GPU; none is visible (/dev/nvidiactl)"));
  std::map<std::string, verify::CxxVerdict> verdicts;
  if (verify == VerifyMode::Off || !gpu || opts.kbVerify.empty() ||
      out->rewritten == 0)
    return verdicts;
  auto v = verifyFunctions(opts.kbVerify, analysis, *out);
  if (!v)
    return v.takeError();
  verdicts = std::move(*v);
  bool rejected = false;
  for (CxxChain &c : analysis.chains) {
    if (!c.plan.whyNot.empty())
      continue;
    auto it = verdicts.find(cxxFusedName(c.plan));
    if (it == verdicts.end() ||
        it->second.state != verify::CxxVerdict::State::Rejected)
      continue;
    c.plan.whyNot = "kb-verify rejected its kernel: " + it->second.detail;
    rejected = true;
  }
  if (rejected) {
    out = rewriteCxx(analysis, layout.includeFor, opts.fastMath);
    if (!out)
      return failure(FailureKind::Input, toString(out.takeError()));
  }
  return verdicts;
}

/// Every output, inputs without a chain included (copied to -o DIR
/// unchanged so that it holds a complete set; untouched with --in-place),
/// written together or not at all.
Expected<std::vector<std::string>> writeOutputs(const CxxRewriteOptions &opts,
                                                const CxxAnalysis &analysis,
                                                const CxxRewriteOutput &out,
                                                const Layout &layout,
                                                StringRef lockPath) {
  if (!opts.outDir.empty())
    if (std::error_code ec = sys::fs::create_directories(opts.outDir))
      return failure(FailureKind::Usage,
                     "cannot create '" + opts.outDir + "': " + ec.message());
  FileTransaction tx(FileTransaction::journalIn(layout.kernelsDir));
  std::vector<std::string> written, backups;
  for (const std::string &f : opts.inputs.files) {
    auto changed = out.files.find(f);
    if (changed == out.files.end())
      for (auto it = out.files.begin(); it != out.files.end(); ++it)
        if (sys::fs::equivalent(it->first, f)) {
          changed = it;
          break;
        }
    if (changed == out.files.end() && opts.inPlace)
      continue;
    std::string text;
    if (changed != out.files.end()) {
      text = changed->second;
    } else {
      auto read = readTextFile(f);
      if (!read)
        return withKind(read.takeError(), FailureKind::Usage);
      text = std::move(*read);
    }
    if (opts.inPlace) {
      // A read-only source is the user's decision: refused, not replaced.
      // Its mode says so, not access(): root may write any file.
      sys::fs::file_status st;
      if (sys::fs::status(f, st) ||
          !(st.permissions() & sys::fs::owner_write) ||
          sys::fs::access(f, sys::fs::AccessMode::Write))
        return failure(FailureKind::Usage,
                       "'" + f +
                           "' is read-only: --in-place does not replace it "
                           "(make it writable, or write to -o DIR); nothing "
                           "was changed");
      // The first original stays: a second run must not back up a file
      // that is already rewritten.
      std::string backup = f + ".kb-orig";
      if (!sys::fs::exists(backup)) {
        if (std::error_code ec = sys::fs::copy_file(f, backup))
          return failure(FailureKind::Usage, "cannot back up '" + f + "' to '" +
                                                 backup + "': " + ec.message() +
                                                 "; nothing was changed");
        backups.push_back(backup);
      }
    }
    std::string target = layout.target(opts, f);
    if (Error err = tx.stage(target, text))
      return withKind(std::move(err), FailureKind::Usage);
    written.push_back(target);
  }
  SmallString<256> source(layout.kernelsDir);
  sys::path::append(source, "kb_kernels.cu");
  // Sources rewritten by earlier runs into these files call functions this
  // run may not generate: they stay.
  CxxRewriteOutput merged = out;
  if (sys::fs::exists(layout.header) && sys::fs::exists(source)) {
    auto header = readTextFile(layout.header);
    if (!header)
      return withKind(header.takeError(), FailureKind::Usage);
    auto cu = readTextFile(source);
    if (!cu)
      return withKind(cu.takeError(), FailureKind::Usage);
    keepEarlierKernels(merged, *header, *cu);
  }
  SmallVector<std::pair<std::string, std::string>, 4> extra = {
      {layout.header, merged.header}, {source.str().str(), merged.source}};
  if (opts.writeHarness) {
    SmallString<256> p(layout.kernelsDir);
    sys::path::append(p, "kb_verify_harness.cpp");
    extra.push_back({p.str().str(), cxxVerifyHarness(analysis, out)});
  }
  if (opts.updateLock)
    extra.push_back({lockPath.str(), cxxLockJson(out)});
  for (auto &[path, text] : extra) {
    if (Error err = tx.stage(path, text))
      return withKind(std::move(err), FailureKind::Usage);
    written.push_back(path);
  }
  if (Error err = tx.commit()) {
    for (const std::string &b : backups)
      sys::fs::remove(b);
    return withKind(std::move(err), FailureKind::Usage);
  }
  return written;
}

void printLog(const CxxAnalysis &analysis, const CxxRewriteOutput &out,
              ArrayRef<std::string> written, raw_ostream &os) {
  for (auto [i, c] : llvm::enumerate(analysis.chains)) {
    os << c.file << ":" << c.anchor.line << ": " << c.summary() << "\n  ";
    if (out.functions[i].empty()) {
      os << "left as is: "
         << (c.plan.whyNot.empty()
                 ? "the code around it is not rewritten, so its call has "
                   "no place"
                 : c.plan.whyNot)
         << "\n";
      continue;
    }
    auto lock = out.lock.find(out.functions[i]);
    os << "rewritten: kb_rewrite::" << out.functions[i]
       << (c.plan.partial.empty() ? "" : " (" + c.plan.partial + ")") << " ["
       << (lock == out.lock.end() ? "" : lock->second.verdict) << "]\n";
  }
  for (const CxxSkip &s : analysis.skipped)
    os << s.file << ":" << s.line << ": skipped: " << s.reason << "\n";
  os << out.rewritten << " of " << analysis.chains.size()
     << " chains rewritten; wrote";
  for (const std::string &w : written)
    os << " " << w;
  os << "\n";
}

} // namespace

Error rewriteCxxSources(const CxxRewriteOptions &opts, raw_ostream &os) {
  if (opts.inPlace == !opts.outDir.empty())
    return failure(FailureKind::Usage,
                   "rewrite (C++ sources): give exactly one of -o DIR and "
                   "--in-place");
  StringSet<> names;
  for (const std::string &f : opts.inputs.files)
    if (!names.insert(sys::path::filename(f)).second && !opts.inPlace)
      return failure(FailureKind::Usage,
                     "two inputs are called '" + sys::path::filename(f) +
                         "': -o DIR would write both to one file");

  // A run killed between its renames left a journal beside the kernels:
  // its files go back to what they were before it, then this run reads
  // them. (The kernels' directory does not depend on the sources' chains.)
  std::string journal =
      FileTransaction::journalIn(layoutFor(opts, CxxAnalysis()).kernelsDir);
  auto recovered = FileTransaction::recover(journal);
  if (!recovered)
    return withKind(recovered.takeError(), FailureKind::Usage);
  if (*recovered && !opts.quiet)
    os << "note: an interrupted kb-rewrite run was rolled back (" << journal
       << ")\n";
  auto analysis = analyzeCxxSources(opts.inputs);
  if (!analysis)
    return withKind(analysis.takeError(), FailureKind::Input);
  Layout layout = layoutFor(opts, *analysis);
  auto out = rewriteCxx(*analysis, layout.includeFor, opts.fastMath);
  if (!out)
    return failure(FailureKind::Input, toString(out.takeError()));

  // Verification on a GPU host: every fused function against its own ATen
  // fallback (kb-verify --cxx); a rejected one is not used. Replaying a
  // lock (builds) takes the lock's verdicts instead, unless --verify on.
  const bool replay = !opts.lockPath.empty() && !opts.updateLock;
  VerifyMode verify = opts.verify;
  if (verify == VerifyMode::Auto && replay)
    verify = VerifyMode::Off;
  std::string lockPath = opts.lockPath;
  if (opts.updateLock && lockPath.empty())
    lockPath = "kb.lock.json";
  std::string lockText;
  if (replay) {
    auto text = readTextFile(lockPath);
    if (!text) {
      consumeError(text.takeError());
      return failure(FailureKind::Usage,
                     "cannot read the lock file '" + lockPath +
                         "' (create it with --update-lock)");
    }
    lockText = std::move(*text);
    // What kb-verify rejected when the lock was written stays rejected: a
    // replay does not verify, so it must not bring a rejected kernel back.
    if (verify == VerifyMode::Off) {
      std::set<std::string> rejected = lockedRejections(lockText);
      bool dropped = false;
      for (CxxChain &c : analysis->chains)
        if (c.plan.whyNot.empty() && rejected.count(cxxFusedName(c.plan))) {
          c.plan.whyNot = "the lock file records kb-verify's rejection of its "
                          "kernel (--verify on checks it again)";
          dropped = true;
        }
      if (dropped) {
        out = rewriteCxx(*analysis, layout.includeFor, opts.fastMath);
        if (!out)
          return failure(FailureKind::Input, toString(out.takeError()));
      }
    }
  }
  auto verdicts = verifyAndDrop(opts, verify, *analysis, layout, out);
  if (!verdicts)
    return verdicts.takeError();
  for (auto &[name, entry] : out->lock)
    if (auto it = verdicts->find(name); it != verdicts->end()) {
      entry.verdict = it->second.verdict;
      entry.evidence = it->second.printed;
    }
  // A lock replays: the generated kernels must be the locked ones.
  if (replay)
    if (Error err = checkCxxLock(lockPath, lockText, *out))
      return failure(FailureKind::Input, toString(std::move(err)));

  auto written = writeOutputs(opts, *analysis, *out, layout, lockPath);
  if (!written)
    return written.takeError();
  if (opts.json)
    os << cxxRewriteJson(*analysis, *out, *written);
  else if (!opts.quiet)
    printLog(*analysis, *out, *written, os);
  return Error::success();
}

} // namespace kb::driver
