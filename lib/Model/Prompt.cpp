//===- Prompt.cpp - Prompts from kernel specs, kernels from replies -------===//

#include "kb/Model/Prompt.h"
#include "kb/Support/InputFile.h"
#include "kb/Verify/Checks.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <regex>

using namespace llvm;

namespace kb::model {
namespace {

const std::vector<std::pair<std::string, std::string>> &builtinTemplates() {
  static const std::vector<std::pair<std::string, std::string>> files = {
#include "PromptFiles.inc"
  };
  return files;
}

Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

std::string fmtMs(std::optional<double> v) {
  return v ? formatv("{0:F4}", *v).str() : "unknown";
}

} // namespace

Expected<PromptTemplates> PromptTemplates::load(StringRef dir) {
  PromptTemplates t;
  for (const auto &[file, text] : builtinTemplates())
    t.texts[sys::path::stem(file).str()] = text;
  if (dir.empty())
    return t;
  for (auto &[name, text] : t.texts) {
    SmallString<256> path(dir);
    sys::path::append(path, name + ".txt");
    if (!sys::fs::exists(path))
      continue; // the built-in template stays
    auto buf = readInputText(path);
    if (!buf)
      return err("prompt template: " + toString(buf.takeError()));
    text = std::move(*buf);
  }
  return t;
}

Expected<std::string>
PromptTemplates::render(StringRef name,
                        const std::map<std::string, std::string> &vars) const {
  auto it = texts.find(name.str());
  if (it == texts.end())
    return err("no prompt template '" + name + "'");
  static const std::regex placeholder(R"(\{\{([a-z_]+)\}\})");
  std::string out;
  const std::string &text = it->second;
  auto begin = std::sregex_iterator(text.begin(), text.end(), placeholder);
  size_t last = 0;
  for (auto m = begin; m != std::sregex_iterator(); ++m) {
    out.append(text, last, m->position() - last);
    auto v = vars.find((*m)[1].str());
    if (v == vars.end())
      return err("prompt template '" + name + ".txt' uses {{" + (*m)[1].str() +
                 "}}, which kb-rewrite does not provide");
    out += v->second;
    last = m->position() + m->length();
  }
  out.append(text, last, std::string::npos);
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

std::map<std::string, std::string> specVars(const KernelSpec &s) {
  std::map<std::string, std::string> v{
      {"name", s.name},         {"kind", s.kind},
      {"pytorch", s.pytorch},   {"kb_ir", s.kbIR},
      {"tensors", s.tensors},   {"signature", s.signature},
      {"grid", s.grid},         {"block", s.block},
      {"example", s.example},   {"example_kind", s.exampleKind},
      {"retrieved", s.retrieved.empty() ? "(none)" : s.retrieved},
      {"gpu", s.gpu.empty() ? "the GPU" : s.gpu},
      {"baseline_ms", fmtMs(s.baselineMs)},
      {"eager_ms", fmtMs(s.eagerMs)},
      {"bytes_mb", formatv("{0:F1}", s.bytes / 1e6).str()},
      {"copy_gbs", s.copyGBs ? formatv("{0:F0}", *s.copyGBs).str() : "unknown"},
  };
  v["achieved_gbs"] =
      s.baselineMs && *s.baselineMs > 0
          ? formatv("{0:F0}", s.bytes / (*s.baselineMs * 1e-3) / 1e9).str()
          : "unknown";
  v["roofline_ms"] = s.copyGBs && *s.copyGBs > 0
                         ? formatv("{0:F4}", s.bytes / (*s.copyGBs * 1e9) * 1e3).str()
                         : "unknown";
  return v;
}

Expected<std::vector<Message>>
draftMessages(const PromptTemplates &t, const KernelSpec &spec, bool profile) {
  auto vars = specVars(spec);
  auto system = t.render("system", vars);
  if (!system)
    return system.takeError();
  auto draft = t.render("draft", vars);
  if (!draft)
    return draft.takeError();
  std::string user = *draft;
  if (profile) {
    vars["draft"] = *draft;
    auto p = t.render("profile", vars);
    if (!p)
      return p.takeError();
    user = *p;
  }
  return std::vector<Message>{{"system", *system}, {"user", user}};
}

Expected<std::vector<Message>>
repairMessages(const PromptTemplates &t, const KernelSpec &spec,
               std::vector<Message> conversation, const std::string &reply,
               const std::string &verdict, const std::string &feedback) {
  auto vars = specVars(spec);
  vars["verdict"] = verdict;
  vars["feedback"] = feedback;
  auto r = t.render("repair", vars);
  if (!r)
    return r.takeError();
  conversation.push_back({"assistant", reply});
  conversation.push_back({"user", *r});
  return conversation;
}

Expected<std::string> extractKernel(StringRef reply, StringRef entry) {
  // ``` optionally followed by a language tag, up to the closing ```.
  static const std::regex fence(R"(```[ \t]*([A-Za-z0-9_+\-]*)[ \t]*\n)");
  std::string text = reply.str();
  std::vector<std::string> blocks;
  bool unclosed = false;
  auto it = std::sregex_iterator(text.begin(), text.end(), fence);
  size_t pos = 0;
  for (; it != std::sregex_iterator(); ++it) {
    if ((size_t)it->position() < pos)
      continue; // an opening fence inside a block already taken
    size_t start = it->position() + it->length();
    size_t end = text.find("```", start);
    if (end == std::string::npos) {
      unclosed = true;
      break;
    }
    blocks.push_back(text.substr(start, end - start));
    pos = end + 3;
  }
  if (blocks.empty())
    return err(unclosed ? "the reply was cut off inside its code block "
                          "(truncated): no complete kernel"
                        : "the reply has no fenced code block");
  const std::regex defines("__global__[^;{]*\\b" + entry.str() + "\\s*\\(");
  for (const std::string &b : blocks)
    if (std::regex_search(b, defines)) {
      if (auto rej = verify::staticCheck(b, entry.str()))
        return err(std::string("static check: ") +
                   kb::verify::statusName(rej->status) + ": " + rej->detail);
      return b;
    }
  return err(formatv("no code block defines __global__ {0}(...) (the "
                     "required entry point){1}",
                     entry, unclosed ? "; the last block was cut off" : "")
                 .str());
}

} // namespace kb::model
