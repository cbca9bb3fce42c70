//===- CxxImporter.cpp - C++ chains as kb-dialect IR ----------------------===//
//
// Built from each chain's rewrite plan, which already holds every op
// against its op-semantics row (overload, schema operands), so the IR is
// what the rewrite fuses: a partial plan (statements in between) gives its
// last ops only.
//
//===----------------------------------------------------------------------===//

#include "kb/Import/CxxImporter.h"
#include "kb/IR/KbDialect.h"
#include "kb/IR/OpSemantics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;

namespace kb {
namespace {

class ChainImporter {
public:
  ChainImporter(MLIRContext &ctx, ModuleOp module)
      : ctx(ctx), b(&ctx), module(module) {}

  ImportedChain import(const CxxChain &c, llvm::StringRef name) {
    ImportedChain out;
    const CxxRewritePlan &p = c.plan;
    Type tensor = UnrankedTensorType::get(b.getF32Type());
    auto fileLoc = [&](unsigned line, unsigned col) -> Location {
      return FileLineColLoc::get(&ctx, c.file, line, col);
    };
    // Function arguments: the anchor's result, then tensors and scalars the
    // kernel takes at run time (module state is named `<module>.<field>`).
    SmallVector<Type> argTypes{tensor};
    SmallVector<std::string> sources{p.input};
    std::map<int, unsigned> argOf;
    for (size_t i = 0; i < p.operands.size(); ++i) {
      const CxxOperand &o = p.operands[i];
      bool isTensor =
          o.kind == CxxOperand::Tensor || o.kind == CxxOperand::ModuleTensor;
      bool isScalar = (o.kind == CxxOperand::Scalar && !literal(o.text)) ||
                      o.kind == CxxOperand::ModuleOption;
      // A module's int[] option (a pool's kernel_size): a list known at
      // run time.
      bool isList = o.kind == CxxOperand::ModuleIntList;
      if (!isTensor && !isScalar && !isList)
        continue;
      argOf[i] = argTypes.size();
      // A module option keeps the schema type it feeds (ceil_mode: bool).
      Type scalar = b.getF64Type();
      if (o.kind == CxxOperand::ModuleOption && o.optionType == ArgType::Int)
        scalar = b.getI64Type();
      else if (o.kind == CxxOperand::ModuleOption &&
               o.optionType == ArgType::Bool)
        scalar = b.getI1Type();
      argTypes.push_back(isTensor ? tensor
                         : isList ? Type(ListType::get(&ctx, b.getI64Type()))
                                  : scalar);
      sources.push_back(o.owner >= 0 ? p.operands[o.owner].text + "." + o.text
                                     : o.text);
    }
    b.setInsertionPointToEnd(module.getBody());
    auto fn = func::FuncOp::create(b, fileLoc(c.anchor.line, c.anchor.column),
                                   name, b.getFunctionType(argTypes, {tensor}));
    fn->setAttr("kb.anchor", b.getStringAttr(c.anchor.op));
    fn->setAttr("kb.summary", b.getStringAttr(c.summary()));
    for (size_t i = 0; i < sources.size(); ++i)
      fn.setArgAttr(i, "kb.source", b.getStringAttr(sources[i]));
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToEnd(entry);

    // Each op's result: `x * torch::sigmoid(x)` reads one twice.
    SmallVector<Value> results;
    auto resultAt = [&](int j) {
      return j < 0 ? entry->getArgument(0) : results[j];
    };
    size_t first = c.ops.size() - p.ops.size();
    for (size_t k = 0; k < p.ops.size(); ++k) {
      const CxxPlanOp &op = p.ops[k];
      const CxxOpSite &site = c.ops[first + k];
      Location l = fileLoc(site.line, site.column);
      const OpInfo *row = rowOf(op);
      if (!row)
        continue; // the plan chose a row; never reached
      std::map<std::string, int> named(op.named.begin(), op.named.end());
      SmallVector<Value> operands;
      for (size_t a = 0; a < row->args.size(); ++a) {
        if (a == op.chainArg) {
          operands.push_back(resultAt((int)k - op.selfBack));
          continue;
        }
        const ArgSpec &spec = row->args[a];
        int idx = op.argAt(a);
        if (auto it = named.find(spec.name); idx < 0 && it != named.end())
          idx = it->second;
        if (idx >= 0 && p.operands[idx].kind == CxxOperand::Value)
          operands.push_back(resultAt((int)k - p.operands[idx].back));
        else
          operands.push_back(operand(p, idx, spec, entry, argOf, l));
        if (idx >= 0 && p.operands[idx].kind != CxxOperand::Value)
          out.operandValues.push_back({operands.back(), idx});
      }
      auto aten = AtenOp::create(
          b, l, TypeRange{tensor}, b.getStringAttr(row->name),
          b.getStringAttr(row->overload),
          op.inPlace ? b.getUnitAttr() : nullptr, /*kind=*/nullptr, operands);
      results.push_back(aten->getResult(0));
      out.ops.push_back(aten);
    }
    func::ReturnOp::create(b, fileLoc(c.ops.back().line, c.ops.back().column),
                           results.back());
    out.fn = fn;
    return out;
  }

private:
  MLIRContext &ctx;
  OpBuilder b;
  ModuleOp module;

  static std::optional<double> literal(llvm::StringRef text) {
    text = text.trim();
    if (text.ends_with("f") && !text.starts_with("0x"))
      text = text.drop_back();
    double v;
    if (!text.getAsDouble(v))
      return v;
    return std::nullopt;
  }

  Value constant(Location l, Type t, Attribute a) {
    return ConstantOp::create(b, l, t, a);
  }

  /// Schema operand `spec` of an op: the plan's operand `idx`, or where the
  /// call left it out, the schema default (None for an optional one).
  Value operand(const CxxRewritePlan &p, int idx, const ArgSpec &spec,
                Block *entry, const std::map<int, unsigned> &argOf,
                Location l) {
    std::string text;
    if (idx >= 0) {
      if (auto it = argOf.find(idx); it != argOf.end())
        return entry->getArgument(it->second);
      text = p.operands[idx].text;
    } else if (spec.name == "training") {
      // The fused form of a batch norm module is its eval form (the call
      // runs the module itself in training mode).
      return constant(l, b.getI1Type(), b.getBoolAttr(false));
    } else {
      text = spec.defaultValue;
    }
    llvm::StringRef t(text);
    if (t.size() >= 2 && t.front() == '"' && t.back() == '"')
      return constant(l, StrType::get(&ctx),
                      b.getStringAttr(t.drop_front().drop_back()));
    if (t == "true" || t == "True" || t == "false" || t == "False")
      return constant(l, b.getI1Type(),
                      b.getBoolAttr(t == "true" || t == "True"));
    int64_t i;
    if (!t.getAsInteger(10, i))
      return constant(l, b.getI64Type(), b.getI64IntegerAttr(i));
    // `{2, 3}` (an int[] literal of a stage op) or the schema's `[]`: a
    // list of int constants, as TorchScript's prim::ListConstruct gives.
    if ((t.starts_with("{") && t.ends_with("}")) ||
        (t.starts_with("[") && t.ends_with("]"))) {
      SmallVector<llvm::StringRef> parts;
      t.drop_front().drop_back().split(parts, ',', -1, false);
      SmallVector<Value> elems;
      for (llvm::StringRef part : parts) {
        if (part.trim().getAsInteger(10, i))
          return constant(l, NoneType::get(&ctx), b.getUnitAttr());
        elems.push_back(constant(l, b.getI64Type(), b.getI64IntegerAttr(i)));
      }
      return ListOp::create(b, l, ListType::get(&ctx, b.getI64Type()), elems);
    }
    if (auto d = literal(t))
      return constant(l, b.getF64Type(), b.getF64FloatAttr(*d));
    return constant(l, NoneType::get(&ctx), b.getUnitAttr());
  }
};

std::string sanitize(llvm::StringRef s) {
  std::string out;
  for (char ch : s)
    out += llvm::isAlnum(ch) ? ch : '_';
  return out;
}

} // namespace

ImportedChain importCxxChain(ModuleOp module, const CxxChain &c,
                             llvm::StringRef name) {
  return ChainImporter(*module.getContext(), module).import(c, name);
}

OwningOpRef<ModuleOp> importCxxChains(MLIRContext &ctx, const CxxAnalysis &a) {
  ctx.loadDialect<KbDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  ChainImporter importer(ctx, *module);
  std::map<std::string, int> count;
  for (const CxxChain &c : a.chains) {
    if (!c.plan.whyNot.empty() || c.plan.ops.empty())
      continue;
    std::string base = sanitize(c.function);
    importer.import(c, base + "_" + std::to_string(count[base]++));
  }
  return module;
}

} // namespace kb
