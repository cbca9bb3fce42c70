//===- RewriteCxx.cpp - `kb-rewrite rewrite` over libtorch C++ sources ----===//
//
// Arguments are read here, not by cl::opt, because everything after `--` is
// a compiler's command line. Inputs are never modified unless --in-place is
// given, and then only after every output was written to a temporary file
// beside its target (renames are atomic; a backup <file>.kb-orig is kept).
//
//===----------------------------------------------------------------------===//

#include "RewriteCxx.h"

#include "kb/Emit/CxxRewrite.h"
#include "kb/Emit/CxxVerifyHarness.h"
#include "kb/Import/CxxFrontend.h"

#include "kb/Verify/Client.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

int error(int code, const Twine &msg) {
  WithColor::error(errs(), "kb-rewrite") << msg << "\n";
  return code;
}

/// Writes `text` to `path` through a temporary file in the same directory.
Error writeAtomically(StringRef path, StringRef text) {
  SmallString<256> tmp(path);
  tmp += ".kb-tmp";
  {
    std::error_code ec;
    raw_fd_ostream os(tmp, ec);
    if (ec)
      return createStringError(ec, "cannot write '" + tmp + "'");
    os << text;
    os.close();
    if (os.has_error())
      return createStringError(os.error(), "cannot write '" + tmp + "'");
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return createStringError(ec, "cannot replace '" + path + "'");
  }
  return Error::success();
}

/// kb-verify --cxx over the generated files in a scratch directory: the
/// verdict of every fused function, by name.
Expected<std::map<std::string, json::Object>>
verifyKernels(StringRef kbVerify, const kb::CxxAnalysis &analysis,
              const kb::CxxRewriteOutput &out) {
  SmallString<256> dir;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("kb-cxx-verify", dir))
    return createStringError(ec, "cannot create a scratch directory");
  for (auto [name, text] :
       {std::pair<const char *, std::string>("kb_kernels.h", out.header),
        {"kb_kernels.cu", out.source},
        {"kb_verify_harness.cpp", kb::cxxVerifyHarness(analysis, out)}}) {
    SmallString<256> p(dir);
    sys::path::append(p, name);
    if (Error err = writeAtomically(p, text))
      return std::move(err);
  }
  SmallString<256> outPath(dir), errPath(dir);
  sys::path::append(outPath, "verdicts.jsonl");
  sys::path::append(errPath, "kb-verify.log");
  auto run = kb::verify::runVerifier(kbVerify, {"--cxx", dir.str().str()}, "",
                                     outPath, errPath);
  if (!run)
    return run.takeError();
  std::map<std::string, json::Object> verdicts;
  for (json::Object &line : run->lines) {
    if (auto e = line.getString("error"))
      return createStringError(inconvertibleErrorCode(),
                               "kb-verify --cxx " + dir + ": " + *e);
    if (auto f = line.getString("function"))
      verdicts[f->str()] = std::move(line);
  }
  sys::fs::remove_directories(dir);
  return verdicts;
}

} // namespace

int runRewriteCxx(int argc, char **argv) {
  kb::CxxInputs in;
  bool json = false, inPlace = false, updateLock = false, harness = false;
  std::string outDir, lockPath, verify = "auto", kbVerify;
  for (int i = 2; i < argc; ++i) {
    StringRef a = argv[i];
    if (in.haveFlags)
      in.flags.push_back(a.str());
    else if (a == "--")
      in.haveFlags = true;
    else if (a == "--json")
      json = true;
    else if (a == "--in-place")
      inPlace = true;
    else if (a == "-p" && i + 1 < argc)
      in.buildDir = argv[++i];
    else if (a.starts_with("-p="))
      in.buildDir = a.drop_front(3).str();
    else if (a == "-o" && i + 1 < argc)
      outDir = argv[++i];
    else if (a == "--lock" && i + 1 < argc)
      lockPath = argv[++i];
    else if (a.starts_with("--lock="))
      lockPath = a.drop_front(7).str();
    else if (a == "--update-lock")
      updateLock = true;
    else if (a == "--verify-harness")
      harness = true;
    else if (a.starts_with("--verify="))
      verify = a.drop_front(9).str();
    else if (a == "--verify" && i + 1 < argc)
      verify = argv[++i];
    else if (a.starts_with("--kb-verify="))
      kbVerify = a.drop_front(12).str();
    else if (a == "--kb-verify" && i + 1 < argc)
      kbVerify = argv[++i];
    else if (a.starts_with("-"))
      return error(1, "rewrite (C++ sources): unknown option '" + a +
                          "' (expected -p BUILD_DIR, -o DIR, --in-place, "
                          "--lock FILE, --update-lock, --verify auto|on|off, "
                          "--kb-verify PATH, --verify-harness, --json, -- "
                          "FLAGS)");
    else
      in.files.push_back(a.str());
  }
  if (inPlace == !outDir.empty())
    return error(1, "rewrite (C++ sources): give exactly one of -o DIR and "
                    "--in-place");
  StringSet<> names;
  for (const std::string &f : in.files)
    if (!names.insert(sys::path::filename(f)).second && !inPlace)
      return error(1, "two inputs are called '" + sys::path::filename(f) +
                          "': -o DIR would write both to one file");

  auto analysis = kb::analyzeCxxSources(in);
  if (!analysis)
    return error(2, toString(analysis.takeError()));

  // Where each file lands, and how it spells the generated header.
  std::string kernelsDir = outDir;
  if (inPlace) {
    SmallString<256> d(in.files.front());
    sys::fs::make_absolute(d);
    kernelsDir = sys::path::parent_path(d).str();
  }
  auto target = [&](StringRef file) -> std::string {
    if (inPlace)
      return file.str();
    SmallString<256> p(outDir);
    sys::path::append(p, sys::path::filename(file));
    return p.str().str();
  };
  std::map<std::string, std::string> includeFor;
  SmallString<256> header(kernelsDir);
  sys::path::append(header, "kb_kernels.h");
  for (const kb::CxxChain &c : analysis->chains) {
    SmallString<256> dir(c.file);
    sys::fs::make_absolute(dir);
    sys::path::remove_filename(dir);
    includeFor[c.file] =
        (!inPlace || dir == kernelsDir) ? "kb_kernels.h" : header.str().str();
  }

  if (verify != "auto" && verify != "on" && verify != "off")
    return error(1, "--verify takes auto, on or off, not '" + verify + "'");
  auto out = kb::rewriteCxx(*analysis, includeFor);
  if (!out)
    return error(2, toString(out.takeError()));
  // Verification on a GPU host: every fused function against its own ATen
  // fallback (kb-verify --cxx); a rejected one is not used. Replaying a
  // lock (builds) takes the lock's verdicts instead, unless --verify on.
  const bool replay = !lockPath.empty() && !updateLock;
  if (verify == "auto" && replay)
    verify = "off";
  kbVerify =
      verify == "off"
          ? ""
          : kb::verify::findVerifier(argv[0], (void *)&runRewriteCxx, kbVerify);
  const bool gpu = kb::verify::gpuPresent();
  if (verify == "on" && (!gpu || kbVerify.empty()))
    return error(2, std::string("--verify on needs ") +
                        (gpu ? "kb-verify (pass --kb-verify PATH)"
                             : "a GPU; none is visible (/dev/nvidiactl)"));
  std::map<std::string, json::Object> verdicts;
  if (gpu && !kbVerify.empty() && out->rewritten > 0) {
    auto v = verifyKernels(kbVerify, *analysis, *out);
    if (!v)
      return error(3, toString(v.takeError()));
    verdicts = std::move(*v);
    bool rejected = false;
    for (kb::CxxChain &c : analysis->chains) {
      if (!c.plan.whyNot.empty())
        continue;
      auto it = verdicts.find(kb::cxxFusedName(c.plan));
      if (it == verdicts.end() ||
          it->second.getString("verdict").value_or("") != "rejected")
        continue;
      c.plan.whyNot = "kb-verify rejected its kernel: " +
                      it->second.getString("detail").value_or("").str();
      rejected = true;
    }
    if (rejected) {
      out = kb::rewriteCxx(*analysis, includeFor);
      if (!out)
        return error(2, toString(out.takeError()));
    }
  }
  for (auto &[name, entry] : out->lock)
    if (auto it = verdicts.find(name); it != verdicts.end()) {
      entry.verdict = it->second.getString("verdict").value_or("").str();
      entry.evidence = it->second;
    }
  if (updateLock && lockPath.empty())
    lockPath = "kb.lock.json";
  // A lock replays: the generated kernels must be the locked ones.
  if (!lockPath.empty() && !updateLock) {
    auto buf = MemoryBuffer::getFile(lockPath);
    if (!buf)
      return error(1, "cannot read the lock file '" + lockPath +
                          "' (create it with --update-lock)");
    if (Error err = kb::checkCxxLock(lockPath, (*buf)->getBuffer(), *out))
      return error(2, toString(std::move(err)));
  }

  if (!outDir.empty())
    if (std::error_code ec = sys::fs::create_directories(outDir))
      return error(1, "cannot create '" + outDir + "': " + ec.message());
  std::vector<std::string> written;
  // Inputs without a chain are copied to DIR unchanged, so that DIR holds
  // a complete set; with --in-place they are not touched.
  for (const std::string &f : in.files) {
    auto changed = out->files.find(f);
    if (changed == out->files.end()) {
      for (auto &[path, text] : out->files)
        if (sys::fs::equivalent(path, f)) {
          changed = out->files.find(path);
          break;
        }
    }
    if (changed == out->files.end() && inPlace)
      continue;
    std::string text;
    if (changed != out->files.end()) {
      text = changed->second;
    } else {
      auto buf = MemoryBuffer::getFile(f);
      if (!buf)
        return error(1, "cannot read '" + f + "'");
      text = (*buf)->getBuffer().str();
    }
    if (inPlace) {
      std::string backup = f + ".kb-orig";
      if (std::error_code ec = sys::fs::copy_file(f, backup))
        return error(1, "cannot back up '" + f + "' to '" + backup +
                            "': " + ec.message() + "; nothing was changed");
    }
    if (Error err = writeAtomically(target(f), text))
      return error(1, toString(std::move(err)));
    written.push_back(target(f));
  }
  SmallString<256> source(kernelsDir);
  sys::path::append(source, "kb_kernels.cu");
  for (auto [path, text] :
       {std::pair<std::string, std::string *>(header.str().str(), &out->header),
        {source.str().str(), &out->source}}) {
    if (Error err = writeAtomically(path, *text))
      return error(1, toString(std::move(err)));
    written.push_back(path);
  }

  if (harness) {
    SmallString<256> p(kernelsDir);
    sys::path::append(p, "kb_verify_harness.cpp");
    if (Error err = writeAtomically(p, kb::cxxVerifyHarness(*analysis, *out)))
      return error(1, toString(std::move(err)));
    written.push_back(p.str().str());
  }
  if (updateLock) {
    if (Error err = writeAtomically(lockPath, kb::cxxLockJson(*out)))
      return error(1, toString(std::move(err)));
    written.push_back(lockPath);
  }
  if (json) {
    outs() << kb::cxxRewriteJson(*analysis, *out, written);
    return 0;
  }
  for (size_t i = 0; i < analysis->chains.size(); ++i) {
    const kb::CxxChain &c = analysis->chains[i];
    outs() << c.file << ":" << c.anchor.line << ": " << c.summary() << "\n  ";
    if (out->functions[i].empty())
      outs() << "left as is: " << c.plan.whyNot << "\n";
    else
      outs() << "rewritten: kb_rewrite::" << out->functions[i]
             << (c.plan.partial.empty() ? "" : " (" + c.plan.partial + ")")
             << " [" << out->lock[out->functions[i]].verdict << "]\n";
  }
  for (const kb::CxxSkip &s : analysis->skipped)
    outs() << s.file << ":" << s.line << ": skipped: " << s.reason << "\n";
  outs() << out->rewritten << " of " << analysis->chains.size()
         << " chains rewritten; wrote";
  for (const std::string &w : written)
    outs() << " " << w;
  outs() << "\n";
  return 0;
}
