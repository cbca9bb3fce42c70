//===- Job.cpp - kb-verify job and verdict JSON ---------------------------===//

#include "kb/Verify/Job.h"
#include "kb/Verify/Checks.h"

#include <nlohmann/json.hpp>

using nlohmann::json;
using namespace kb::verify;

const char *kb::verify::nonfiniteName(NonfiniteRule r) {
  switch (r) {
  case NonfiniteRule::Exact:
    return "exact";
  case NonfiniteRule::Order:
    return "order";
  case NonfiniteRule::Any:
    return "any";
  }
  return "exact";
}

namespace {

[[noreturn]] void bad(const std::string &path, const std::string &what) {
  throw JobError(path + ": " + what);
}

const json &need(const json &j, const char *key, const std::string &path) {
  if (!j.is_object() || !j.contains(key))
    bad(path, std::string("missing required key '") + key + "'");
  return j.at(key);
}

std::string str(const json &j, const std::string &path) {
  if (!j.is_string())
    bad(path, "expected a string");
  return j.get<std::string>();
}

/// Expressions may be written as numbers or strings.
std::string exprText(const json &j, const std::string &path) {
  if (j.is_number_integer())
    return std::to_string(j.get<int64_t>());
  return str(j, path);
}

std::vector<int64_t> shape(const json &j, const std::string &path) {
  if (!j.is_array())
    bad(path, "expected an array of integers");
  std::vector<int64_t> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number_integer() || j[i].get<int64_t>() < 0)
      bad(path + "[" + std::to_string(i) + "]",
          "expected a non-negative integer");
    out.push_back(j[i].get<int64_t>());
  }
  return out;
}

TensorSpec tensor(const json &j, const std::string &path, bool output) {
  TensorSpec t;
  t.name = str(need(j, "name", path), path + ".name");
  t.shape = shape(need(j, "shape", path), path + ".shape");
  if (j.contains("dtype"))
    t.dtype = str(j["dtype"], path + ".dtype");
  // int64 outputs (argmax / argmin indices) must equal eager's exactly;
  // bool inputs are masks (random bits each trial).
  // float16 / bfloat16 tensors are compared as float32 values with their
  // own format's bounds (TensorChecks.h).
  bool floating =
      t.dtype == "float32" || t.dtype == "float16" || t.dtype == "bfloat16";
  if (!floating && !(output && t.dtype == "int64") &&
      !(!output && t.dtype == "bool"))
    bad(path + ".dtype",
        std::string(output ? "outputs are float32, float16, bfloat16 or int64"
                           : "inputs are float32, float16, bfloat16 or bool") +
            ", got '" + t.dtype + "'");
  if (j.contains("role"))
    t.role = str(j["role"], path + ".role");
  if (j.contains("distribution"))
    t.distribution = str(j["distribution"], path + ".distribution");
  if (j.contains("strides")) {
    t.strides = shape(j["strides"], path + ".strides");
    if (t.strides.size() != t.shape.size())
      bad(path + ".strides", "expected one stride per dim of the shape");
    // An output's every element is written once: its layout must be a
    // permutation of row-major (no gaps the poison checks would count).
    if (output && stridedSpan(t.shape, t.strides) != numel(t.shape))
      bad(path + ".strides",
          "an output's strides must lay it out densely (a permutation)");
  }
  return t;
}

std::vector<std::string> triple(const json &j, const std::string &path) {
  if (!j.is_array() || j.empty() || j.size() > 3)
    bad(path, "expected an array of 1 to 3 expressions");
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i)
    out.push_back(exprText(j[i], path + "[" + std::to_string(i) + "]"));
  while (out.size() < 3)
    out.push_back("1");
  return out;
}

ArgSpec arg(const json &j, const std::string &path) {
  if (!j.is_object() || j.size() != 1)
    bad(path, "expected one of {\"tensor\": name}, {\"int64\": expr}, "
              "{\"int32\": expr}, {\"float32\": number}, "
              "{\"workspace\": true}");
  auto it = j.begin();
  ArgSpec a;
  if (it.key() == "tensor")
    a.kind = ArgSpec::Kind::Tensor;
  else if (it.key() == "int64")
    a.kind = ArgSpec::Kind::Int64;
  else if (it.key() == "int32")
    a.kind = ArgSpec::Kind::Int32;
  else if (it.key() == "float32")
    a.kind = ArgSpec::Kind::Float32;
  else if (it.key() == "workspace") {
    if (it.value() != true)
      bad(path + ".workspace", "expected true");
    a.kind = ArgSpec::Kind::Workspace;
    return a;
  } else
    bad(path, "unknown argument kind '" + it.key() + "'");
  if (a.kind == ArgSpec::Kind::Float32 && it.value().is_number())
    a.value = std::to_string(it.value().get<double>());
  else
    a.value = exprText(it.value(), path + "." + it.key());
  return a;
}

json tensorJson(const TensorSpec &t) {
  json j = {{"name", t.name},
            {"shape", t.shape},
            {"dtype", t.dtype},
            {"role", t.role},
            {"distribution", t.distribution}};
  if (!t.strides.empty())
    j["strides"] = t.strides;
  return j;
}

json candidateJson(const Candidate &c) {
  json args = json::array();
  for (const ArgSpec &a : c.args) {
    if (a.kind == ArgSpec::Kind::Workspace) {
      args.push_back({{"workspace", true}});
      continue;
    }
    const char *k = a.kind == ArgSpec::Kind::Tensor   ? "tensor"
                    : a.kind == ArgSpec::Kind::Int64  ? "int64"
                    : a.kind == ArgSpec::Kind::Int32  ? "int32"
                                                      : "float32";
    args.push_back({{k, a.value}});
  }
  return {{"source", c.source},
          {"entry", c.entry},
          {"args", args},
          {"launch",
           {{"grid", c.launch.grid},
            {"block", c.launch.block},
            {"shared_bytes", c.launch.sharedBytes},
            {"workspace_bytes", c.launch.workspaceBytes},
            {"grid_sync", c.launch.gridSync}}},
          {"shape_generic", c.shapeGeneric},
          {"origin", c.origin}};
}

json checksJson(const Checks &c) {
  return {{"trials", c.trials},
          {"seed", c.seed},
          {"special_values", c.specialValues},
          {"extra_shapes", c.extraShapes},
          {"timing", c.timing},
          {"timing_runs", c.timingRuns},
          {"warmup", c.warmup},
          {"tolerance_factor", c.toleranceFactor},
          {"nonfinite", nonfiniteName(c.nonfinite)},
          {"sanitizer", c.sanitizer}};
}

json timingJson(const std::optional<Timing> &t) {
  if (!t)
    return nullptr;
  return {{"median_ms", t->medianMs}, {"min_ms", t->minMs},
          {"max_ms", t->maxMs}, {"runs", t->runs}};
}

std::optional<Timing> timingFrom(const json &j) {
  if (j.is_null())
    return std::nullopt;
  Timing t;
  t.medianMs = j.value("median_ms", 0.0);
  t.minMs = j.value("min_ms", 0.0);
  t.maxMs = j.value("max_ms", 0.0);
  t.runs = j.value("runs", 0);
  return t;
}

} // namespace

const TensorSpec *Job::findTensor(const std::string &name) const {
  for (const TensorSpec &t : inputs)
    if (t.name == name)
      return &t;
  for (const TensorSpec &t : outputs)
    if (t.name == name)
      return &t;
  return nullptr;
}

Job kb::verify::parseJob(const std::string &text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error &e) {
    throw JobError(std::string("job: invalid JSON: ") + e.what());
  }
  Job job;
  job.schemaVersion = need(j, "schema_version", "job").get<int>();
  if (job.schemaVersion != kSchemaVersion)
    bad("job.schema_version", "unsupported version " +
                                  std::to_string(job.schemaVersion) +
                                  " (this kb-verify reads " +
                                  std::to_string(kSchemaVersion) + ")");
  job.id = j.value("id", "");
  job.reference = str(need(j, "reference", "job"), "job.reference");
  const json &ins = need(j, "inputs", "job");
  if (!ins.is_array())
    bad("job.inputs", "expected an array");
  for (size_t i = 0; i < ins.size(); ++i)
    job.inputs.push_back(
        tensor(ins[i], "job.inputs[" + std::to_string(i) + "]", false));
  const json &outs = need(j, "outputs", "job");
  if (!outs.is_array() || outs.empty())
    bad("job.outputs", "expected a non-empty array");
  for (size_t i = 0; i < outs.size(); ++i)
    job.outputs.push_back(
        tensor(outs[i], "job.outputs[" + std::to_string(i) + "]", true));
  if (j.contains("extra_shapes")) {
    const json &es = j["extra_shapes"];
    if (!es.is_array())
      bad("job.extra_shapes", "expected an array of {name: shape} objects");
    for (size_t i = 0; i < es.size(); ++i) {
      std::string p = "job.extra_shapes[" + std::to_string(i) + "]";
      if (!es[i].is_object())
        bad(p, "expected an object");
      ShapeSet set;
      for (auto it = es[i].begin(); it != es[i].end(); ++it) {
        if (!job.findTensor(it.key()))
          bad(p, "names no input or output '" + it.key() + "'");
        set[it.key()] = shape(it.value(), p + "." + it.key());
      }
      job.extraShapes.push_back(std::move(set));
    }
  }
  const json &c = need(j, "candidate", "job");
  job.candidate.source = str(need(c, "source", "job.candidate"),
                             "job.candidate.source");
  job.candidate.entry = str(need(c, "entry", "job.candidate"),
                            "job.candidate.entry");
  const json &args = need(c, "args", "job.candidate");
  if (!args.is_array())
    bad("job.candidate.args", "expected an array");
  for (size_t i = 0; i < args.size(); ++i) {
    ArgSpec a = arg(args[i], "job.candidate.args[" + std::to_string(i) + "]");
    if (a.kind == ArgSpec::Kind::Tensor && !job.findTensor(a.value))
      bad("job.candidate.args[" + std::to_string(i) + "]",
          "names no input or output '" + a.value + "'");
    job.candidate.args.push_back(a);
  }
  const json &launch = need(c, "launch", "job.candidate");
  job.candidate.launch.grid =
      triple(need(launch, "grid", "job.candidate.launch"),
             "job.candidate.launch.grid");
  job.candidate.launch.block =
      triple(need(launch, "block", "job.candidate.launch"),
             "job.candidate.launch.block");
  if (launch.contains("shared_bytes"))
    job.candidate.launch.sharedBytes = exprText(
        launch["shared_bytes"], "job.candidate.launch.shared_bytes");
  if (launch.contains("workspace_bytes"))
    job.candidate.launch.workspaceBytes = exprText(
        launch["workspace_bytes"], "job.candidate.launch.workspace_bytes");
  if (launch.contains("grid_sync")) {
    if (!launch["grid_sync"].is_boolean())
      bad("job.candidate.launch.grid_sync", "expected true or false");
    job.candidate.launch.gridSync = launch["grid_sync"].get<bool>();
  }
  bool wantsWorkspace = false;
  for (const ArgSpec &a : job.candidate.args)
    wantsWorkspace |= a.kind == ArgSpec::Kind::Workspace;
  if (wantsWorkspace && job.candidate.launch.workspaceBytes == "0")
    bad("job.candidate.launch.workspace_bytes",
        "a {\"workspace\": true} argument needs a nonzero size");
  job.candidate.shapeGeneric = c.value("shape_generic", false);
  job.candidate.origin = c.value("origin", "unknown");
  // Other shapes would need other strides: a strided input fixes its shape.
  if (job.candidate.shapeGeneric)
    for (size_t i = 0; i < job.inputs.size(); ++i)
      if (!job.inputs[i].strides.empty())
        bad("job.inputs[" + std::to_string(i) + "].strides",
            "strided inputs need a fixed-shape candidate "
            "(shape_generic false)");
  job.arch = j.value("arch", "native");
  if (j.contains("checks")) {
    const json &k = j["checks"];
    Checks &ch = job.checks;
    ch.trials = k.value("trials", ch.trials);
    ch.seed = k.value("seed", ch.seed);
    ch.specialValues = k.value("special_values", ch.specialValues);
    ch.extraShapes = k.value("extra_shapes", ch.extraShapes);
    ch.timing = k.value("timing", ch.timing);
    ch.timingRuns = k.value("timing_runs", ch.timingRuns);
    ch.warmup = k.value("warmup", ch.warmup);
    ch.toleranceFactor = k.value("tolerance_factor", ch.toleranceFactor);
    ch.sanitizer = k.value("sanitizer", ch.sanitizer);
    std::string rule = k.value("nonfinite", std::string("exact"));
    if (rule == "exact")
      ch.nonfinite = NonfiniteRule::Exact;
    else if (rule == "order")
      ch.nonfinite = NonfiniteRule::Order;
    else if (rule == "any")
      ch.nonfinite = NonfiniteRule::Any;
    else
      bad("job.checks.nonfinite", "expected exact, order or any");
    if (ch.trials < 5)
      bad("job.checks.trials", "at least 5 trials are required");
    if (ch.timingRuns < 1 || ch.warmup < 0)
      bad("job.checks", "timing_runs must be >= 1 and warmup >= 0");
    if (ch.sanitizer != "none" && ch.sanitizer != "memcheck" &&
        ch.sanitizer != "racecheck")
      bad("job.checks.sanitizer", "expected none, memcheck or racecheck");
  }
  job.timeoutSeconds = j.value("timeout_s", job.timeoutSeconds);
  return job;
}

std::string kb::verify::toJson(const Job &job) {
  json ins = json::array(), outs = json::array(), extras = json::array();
  for (const TensorSpec &t : job.inputs)
    ins.push_back(tensorJson(t));
  for (const TensorSpec &t : job.outputs)
    outs.push_back(tensorJson(t));
  for (const ShapeSet &s : job.extraShapes)
    extras.push_back(s);
  json j = {{"schema_version", job.schemaVersion},
            {"id", job.id},
            {"reference", job.reference},
            {"inputs", ins},
            {"outputs", outs},
            {"candidate", candidateJson(job.candidate)},
            {"arch", job.arch},
            {"checks", checksJson(job.checks)},
            {"timeout_s", job.timeoutSeconds}};
  if (!job.extraShapes.empty())
    j["extra_shapes"] = extras;
  return j.dump();
}

std::string kb::verify::canonicalJob(const Job &job) {
  // nlohmann::json objects are std::map-backed: keys come out sorted. The id
  // and the timeout do not change what is verified.
  json j = json::parse(toJson(job));
  j.erase("id");
  j.erase("timeout_s");
  return j.dump();
}

namespace {
struct StatusWord {
  kb::verify::VerdictStatus status;
  const char *word;
};
using S = kb::verify::VerdictStatus;
constexpr StatusWord kStatusWords[] = {
    {S::Unknown, "unknown"},
    {S::Accepted, "accepted"},
    {S::Compiled, "compiled"},
    {S::CompileError, "compile_error"},
    {S::ForbiddenConstruct, "forbidden_construct"},
    {S::EntryPointMissing, "entry_point_missing"},
    {S::LaunchError, "launch_error"},
    {S::UnwrittenOutput, "unwritten_output"},
    {S::OutOfBoundsWrite, "out_of_bounds_write"},
    {S::InputMutated, "input_mutated"},
    {S::NanMismatch, "nan_mismatch"},
    {S::WrongResult, "wrong_result"},
    {S::ShapeSpecific, "shape_specific"},
    {S::TimingRecheckFailed, "timing_recheck_failed"},
    {S::ImplausibleSpeed, "implausible_speed"},
    {S::Crashed, "crashed"},
    {S::SanitizerError, "sanitizer_error"},
    {S::Timeout, "timeout"},
    {S::Oom, "oom"},
    {S::InvalidJob, "invalid_job"},
    {S::InternalError, "internal_error"},
};
} // namespace

const char *kb::verify::statusName(VerdictStatus s) {
  for (const StatusWord &w : kStatusWords)
    if (w.status == s)
      return w.word;
  return "unknown";
}

kb::verify::VerdictStatus
kb::verify::parseVerdictStatus(const std::string &word) {
  for (const StatusWord &w : kStatusWords)
    if (word == w.word)
      return w.status;
  return VerdictStatus::Unknown;
}

std::string kb::verify::toJson(const Verdict &v) {
  json shapes = v.shapesChecked;
  return json{{"schema_version", v.schemaVersion},
              {"id", v.id},
              {"status", statusName(v.status)},
              {"accepted", v.accepted()},
              {"detail", v.detail},
              {"cached", v.cached},
              {"max_abs_error", v.maxAbsError},
              {"eager_max_abs_error", v.eagerMaxAbsError},
              {"bound", v.bound},
              {"rel_l2_error", v.relL2Error},
              {"allclose_1e-4", v.allclose1e4},
              {"allclose_1e-2", v.allclose1e2},
              {"deterministic", v.deterministic},
              {"eager_mismatches", v.eagerMismatches},
              {"trials", v.trialsRun},
              {"shapes_checked", shapes},
              {"candidate_timing", timingJson(v.candidateTiming)},
              {"eager_timing", timingJson(v.eagerTiming)},
              {"roofline_ms", v.rooflineMs},
              {"copy_bandwidth_gbs", v.copyBandwidthGBs},
              {"gpu", v.gpu},
              {"driver", v.driver},
              {"cuda", v.cuda},
              {"torch", v.torch},
              {"compile_log", v.compileLog}}
      .dump();
}

Verdict kb::verify::parseVerdict(const std::string &text) {
  json j = json::parse(text);
  Verdict v;
  v.schemaVersion = j.value("schema_version", kSchemaVersion);
  v.id = j.value("id", "");
  v.status = parseVerdictStatus(j.value("status", ""));
  v.detail = j.value("detail", "");
  v.cached = j.value("cached", false);
  v.maxAbsError = j.value("max_abs_error", 0.0);
  v.eagerMaxAbsError = j.value("eager_max_abs_error", 0.0);
  v.bound = j.value("bound", 0.0);
  v.relL2Error = j.value("rel_l2_error", 0.0);
  v.allclose1e4 = j.value("allclose_1e-4", false);
  v.allclose1e2 = j.value("allclose_1e-2", false);
  v.deterministic = j.value("deterministic", true);
  v.eagerMismatches = j.value("eager_mismatches", int64_t(-1));
  v.trialsRun = j.value("trials", 0);
  if (j.contains("shapes_checked"))
    v.shapesChecked =
        j["shapes_checked"].get<std::vector<std::vector<int64_t>>>();
  if (j.contains("candidate_timing"))
    v.candidateTiming = timingFrom(j["candidate_timing"]);
  if (j.contains("eager_timing"))
    v.eagerTiming = timingFrom(j["eager_timing"]);
  v.rooflineMs = j.value("roofline_ms", 0.0);
  v.copyBandwidthGBs = j.value("copy_bandwidth_gbs", 0.0);
  v.gpu = j.value("gpu", "");
  v.driver = j.value("driver", "");
  v.cuda = j.value("cuda", "");
  v.torch = j.value("torch", "");
  v.compileLog = j.value("compile_log", "");
  return v;
}

std::string kb::verify::truncateMiddle(const std::string &text,
                                       size_t maxBytes) {
  if (text.size() <= maxBytes)
    return text;
  size_t head = maxBytes * 2 / 3, tail = maxBytes - head;
  return text.substr(0, head) + "\n[... " +
         std::to_string(text.size() - head - tail) + " bytes cut ...]\n" +
         text.substr(text.size() - tail);
}
