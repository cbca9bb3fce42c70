//===- Manifest.cpp - manifest.json and the kernel files it names ---------===//
//
// manifest.json is what kb_runtime.py loads: per region its kernel (source,
// entry, launch shape, tensors), its channels-last form and library form
// where model_new.py's program uses them.
//
//===----------------------------------------------------------------------===//
#include "kb/Emit/Files.h"
#include "kb/Emit/RewriteOutput.h"

#include "llvm/Support/Path.h"

using namespace llvm;

namespace kb {
namespace {

json::Array shapeList(const std::vector<EmittedTensor> &ts) {
  json::Array a;
  for (const EmittedTensor &t : ts) {
    json::Object o{{"name", t.name}, {"shape", json::Array(t.shape)}};
    if (t.dtype != "float32")
      o["dtype"] = t.dtype; // the runtime allocates int64 indices
    if (!t.strides.empty())
      o["strides"] = json::Array(t.strides); // the runtime's guard
    if (t.relaid)
      o["relaid"] = true;
    a.push_back(std::move(o));
  }
  return a;
}

json::Object channelsLastEntry(const RegionRecord &rec,
                               const ChannelsLastKernel &cl) {
  const EmittedKernel &c = cl.kernel;
  json::Array ins, outs;
  for (const auto &shape : cl.permutedShapes)
    ins.push_back(json::Object{{"shape", json::Array(shape)}});
  for (const EmittedTensor &t : c.outputs)
    outs.push_back(json::Object{{"shape", json::Array(t.shape)}});
  return json::Object{
      {"status", rec.clStatus ? statusName(*rec.clStatus) : StringRef()},
      {"source", "kernels/" + c.name + ".cu"},
      {"entry", c.name},
      {"grid", json::Array(c.grid)},
      {"block", json::Array(c.block)},
      {"shared_bytes", "0"},
      {"workspace_bytes", std::to_string(c.workspaceBytes)},
      {"grid_sync", c.gridSync},
      {"perm", json::Array(cl.perm)},
      {"reads_only", cl.readsOnly},
      {"inputs", std::move(ins)},
      {"outputs", std::move(outs)}};
}

} // namespace

Error writeKernelFiles(StringRef kernelDir, const EmittedKernel &k) {
  if (auto err = writeFileAtomic(kernelDir, k.name + ".cu", k.source))
    return err;
  return writeFileAtomic(kernelDir, k.name + ".job.json", verifyJobJson(k));
}

json::Value manifestJson(const RewriteResult &res, const PythonProgram *prog,
                         const json::Object &params, bool cudaGraphs) {
  json::Array regions;
  for (const RegionPlan &plan : res.regions) {
    const RegionRecord &rec = plan.record;
    json::Object r{{"name", rec.name},
                   {"status", statusName(rec.status)},
                   {"origin", originName(rec.origin)},
                   {"kind", rec.kind},
                   {"anchor", rec.anchor},
                   {"ops", rec.ops}};
    if (plan.kernel && rec.status != RegionStatus::NotGenerated &&
        rec.status != RegionStatus::Kept) {
      const EmittedKernel &k = *plan.kernel;
      r["source"] = "kernels/" + rec.name + ".cu";
      r["entry"] = k.name;
      r["grid"] = json::Array(k.grid);
      r["block"] = json::Array(k.block);
      r["shared_bytes"] = "0";
      if (k.workspaceBytes > 0) {
        r["workspace_bytes"] = std::to_string(k.workspaceBytes);
        r["grid_sync"] = k.gridSync;
      }
      r["inputs"] = shapeList(k.inputs);
      r["outputs"] = shapeList(k.outputs);
      json::Array updates;
      for (auto [o, i] : k.updates)
        updates.push_back(json::Array{o, i});
      r["updates"] = std::move(updates);
    }
    if (plan.channelsLast && (!prog || prog->channelsLast.count(rec.name)))
      r["channels_last"] = channelsLastEntry(rec, *plan.channelsLast);
    else if (prog && prog->convert.count(rec.name))
      r["channels_last"] = json::Object{{"convert", true}};
    if (rec.exactLayout)
      r["exact_layout"] = true;
    if (prog)
      if (auto it = prog->library.find(rec.name); it != prog->library.end())
        r["library"] = json::Object{{"library", it->second.first},
                                    {"call", it->second.second}};
    regions.push_back(std::move(r));
  }
  json::Array inputs;
  if (auto *in = params.getArray("inputs"))
    inputs = *in;
  return json::Object{
      {"schema_version", 1},
      {"graph", sys::path::filename(res.graphPath)},
      {"name", params.getString("name").value_or("model")},
      {"training", params.getBoolean("training").value_or(true)},
      {"cuda_graphs", cudaGraphs},
      {"inputs", std::move(inputs)},
      {"regions", std::move(regions)}};
}

} // namespace kb
