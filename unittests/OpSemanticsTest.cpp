//===- OpSemanticsTest.cpp - The op-semantics table -----------------------===//

#include "kb/IR/OpSemantics.h"

#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <set>

using namespace kb;

TEST(OpSemantics, EveryRowParsesAndIsUnique) {
  std::set<std::string> seen;
  ASSERT_GT(allOps().size(), 100u);
  for (const OpInfo &info : allOps()) {
    EXPECT_FALSE(info.args.empty()) << info.qualifiedName();
    EXPECT_TRUE(seen.insert(info.qualifiedName()).second)
        << "duplicate row " << info.qualifiedName();
    EXPECT_FALSE(info.aten.empty()) << info.qualifiedName();
  }
}

TEST(OpSemantics, PointwiseRowsHaveACudaExpressionNamingTheirOperands) {
  for (const OpInfo &info : allOps()) {
    if (info.kind != OpKind::Elementwise || info.style == OpStyle::Dropout)
      continue;
    ASSERT_FALSE(info.cuda.empty()) << info.qualifiedName();
    // Every {placeholder} must be a schema operand.
    llvm::StringRef rest = info.cuda;
    while (true) {
      size_t open = rest.find('{');
      if (open == llvm::StringRef::npos)
        break;
      size_t close = rest.find('}', open);
      ASSERT_NE(close, llvm::StringRef::npos) << info.qualifiedName();
      llvm::StringRef name = rest.slice(open + 1, close);
      EXPECT_TRUE(info.argIndex(name).has_value())
          << info.qualifiedName() << " uses unknown operand {" << name.str()
          << "}";
      rest = rest.drop_front(close + 1);
    }
  }
}

TEST(OpSemantics, OverloadsResolveByOperandTypes) {
  using V = ValueClass;
  EXPECT_EQ(resolveOverload("add", {V::Tensor, V::Tensor, V::Int})->overload,
            "Tensor");
  EXPECT_EQ(resolveOverload("add", {V::Tensor, V::Float, V::Int})->overload,
            "Scalar");
  EXPECT_EQ(resolveOverload("max", {V::Tensor, V::Int, V::Bool})->overload,
            "dim");
  EXPECT_EQ(resolveOverload("max", {V::Tensor, V::Tensor})->overload, "other");
  EXPECT_EQ(resolveOverload("max", {V::Tensor})->overload, "");
  EXPECT_EQ(resolveOverload("mean", {V::Tensor, V::IntList, V::Bool, V::None})
                ->overload,
            "dim");
  EXPECT_EQ(resolveOverload("mean", {V::Tensor, V::None})->overload, "");
  EXPECT_EQ(resolveOverload("gelu", {V::Tensor, V::Str})->overload, "");
  EXPECT_EQ(resolveOverload("gelu", {V::Tensor})->overload, "legacy");
  // A None bound is accepted by the Scalar? clamp.
  EXPECT_EQ(resolveOverload("clamp", {V::Tensor, V::None, V::Float})->overload,
            "");
  EXPECT_EQ(resolveOverload("relu", {V::Tensor, V::Tensor}), nullptr);
  EXPECT_EQ(resolveOverload("no_such_op", {V::Tensor}), nullptr);
}

TEST(OpSemantics, InPlaceNames) {
  EXPECT_EQ(stripInPlace("aten::relu_"),
            std::make_pair(llvm::StringRef("relu"), true));
  EXPECT_EQ(stripInPlace("aten::relu"),
            std::make_pair(llvm::StringRef("relu"), false));
  EXPECT_EQ(stripInPlace("aten::__and__"),
            std::make_pair(llvm::StringRef("__and__"), false));
  EXPECT_EQ(stripInPlace("aten::_convolution"),
            std::make_pair(llvm::StringRef("_convolution"), false));
}

TEST(OpSemantics, MarkdownListsEveryRow) {
  std::string md = renderOpSemanticsMarkdown();
  for (const OpInfo &info : allOps())
    EXPECT_NE(md.find("`" + info.qualifiedName() + "`"), std::string::npos)
        << info.qualifiedName();
}

TEST(OpSemantics, EveryCxxModuleComputesATableOp) {
  ASSERT_FALSE(kb::cxxModules().empty());
  for (const kb::CxxModuleInfo &m : kb::cxxModules()) {
    auto rows = kb::lookupOverloads(m.op);
    ASSERT_FALSE(rows.empty()) << m.impl.str() << " -> " << m.op.str();
    // Each STATE name feeds a schema operand of that name (a `.name` tensor
    // member only a tensor operand: a layer norm's weight), or the
    // module's own CUDA expression; each {name} of that expression is
    // defined.
    llvm::SmallVector<llvm::StringRef> names;
    m.state.split(names, ' ', -1, false);
    for (llvm::StringRef n : names) {
      if (n == "inplace" || n == "eval")
        continue;
      llvm::StringRef bare = n.ltrim('.');
      bool inSchema = false, tensorInSchema = false;
      for (const kb::ArgSpec &a : rows.front()->args) {
        inSchema |= a.name == bare;
        tensorInSchema |= a.name == bare && a.type == kb::ArgType::Tensor;
      }
      EXPECT_TRUE(m.cuda.contains("{" + bare.str() + "}") ||
                  (n.starts_with(".") ? tensorInSchema : inSchema))
          << m.impl.str() << ": " << n.str();
    }
    for (size_t at = 0; (at = m.cuda.find('{', at)) != llvm::StringRef::npos;
         ++at) {
      llvm::StringRef key = m.cuda.substr(at + 1).split('}').first;
      EXPECT_TRUE(key == "self" || llvm::is_contained(names, key) ||
                  llvm::is_contained(names, "." + key.str()))
          << m.impl.str() << ": {" << key.str() << "}";
    }
  }
  EXPECT_EQ(kb::cxxModuleOp("Conv2dImpl"), "conv2d");
  EXPECT_EQ(kb::cxxModuleOp("BatchNorm2dImpl"), "batch_norm");
  EXPECT_EQ(kb::cxxModuleOp("MyBlockImpl"), "");
}

// Index maps too: Injective rows name theirs, no other row has one, and
// a flat view's element i is its input's element i (one tensor operand).
TEST(OpSemantics, IndexMapsParsedOnceFromTheTable) {
  int flat = 0;
  for (const kb::OpInfo &row : kb::allOps()) {
    if (row.kind != kb::OpKind::Injective) {
      EXPECT_EQ(row.indexMap, kb::IndexMap::None) << row.qualifiedName();
      continue;
    }
    EXPECT_EQ(row.indexMap == kb::IndexMap::None, row.cuda.empty())
        << row.qualifiedName();
    if (row.indexMap != kb::IndexMap::Flat)
      continue;
    ++flat;
    EXPECT_NE(row.style, kb::OpStyle::Dropout) << row.qualifiedName();
    int tensors = 0;
    for (const kb::ArgSpec &a : row.args)
      tensors += a.type == kb::ArgType::Tensor;
    EXPECT_EQ(tensors, 1) << row.qualifiedName();
  }
  EXPECT_EQ(flat, 10);
  EXPECT_EQ(kb::lookupOverloads("permute").front()->indexMap,
            kb::IndexMap::Permute);
  EXPECT_EQ(kb::lookupOverloads("transpose").front()->indexMap,
            kb::IndexMap::Permute);
  EXPECT_EQ(kb::lookupOverloads("roll").front()->indexMap, kb::IndexMap::Roll);
  EXPECT_EQ(kb::lookupOverloads("expand").front()->indexMap,
            kb::IndexMap::None);
}

// Recipes are parsed once from the table: every Reduction row names one,
// its name is the CUDA column's text, and no other row has one.
TEST(OpSemantics, RecipesParsedOnceFromTheTable) {
  for (const kb::OpInfo &row : kb::allOps()) {
    if (row.kind == kb::OpKind::Reduction) {
      EXPECT_NE(row.recipe, kb::Recipe::None) << row.qualifiedName();
      EXPECT_EQ(kb::recipeName(row.recipe), row.cuda) << row.qualifiedName();
    } else {
      EXPECT_EQ(row.recipe, kb::Recipe::None) << row.qualifiedName();
    }
  }
  EXPECT_TRUE(kb::isNormRecipe(kb::Recipe::GroupNorm));
  EXPECT_FALSE(kb::isNormRecipe(kb::Recipe::Softmax));
  EXPECT_EQ(kb::recipeName(kb::Recipe::None), "");
}

namespace {
/// Constant operands given by name, as a frontend would know them.
struct Known : KnownOperands {
  std::map<std::string, double> numbers;
  std::map<std::string, bool> flags;
  std::optional<double> number(llvm::StringRef n) const override {
    auto it = numbers.find(n.str());
    return it == numbers.end() ? std::nullopt : std::optional(it->second);
  }
  std::optional<bool> flag(llvm::StringRef n) const override {
    auto it = flags.find(n.str());
    return it == flags.end() ? std::nullopt : std::optional(it->second);
  }
};
const OpInfo &row(llvm::StringRef name) {
  auto rows = lookupOverloads(name);
  EXPECT_FALSE(rows.empty()) << name.str();
  return *rows.front();
}
} // namespace

// The one rule both frontends classify by (Classify's computeKind with a
// graph's constants, the C++ chains with a call's literals).
TEST(OpSemantics, RefinedKindByConstantOperands) {
  const OpInfo &dropout = row("dropout");
  Known none;
  EXPECT_EQ(refinedKind(dropout, none), OpKind::Opaque); // a random mask
  Known eval;
  eval.flags["train"] = false;
  EXPECT_EQ(refinedKind(dropout, eval), OpKind::Injective);
  Known p0;
  p0.numbers["p"] = 0.0;
  p0.flags["train"] = true;
  EXPECT_EQ(refinedKind(dropout, p0), OpKind::Injective);
  Known train;
  train.numbers["p"] = 0.5;
  train.flags["train"] = true;
  EXPECT_EQ(refinedKind(dropout, train), OpKind::Opaque);
  EXPECT_EQ(refinedKind(row("feature_dropout"), eval), OpKind::Injective);

  const OpInfo &bn = row("batch_norm");
  EXPECT_EQ(refinedKind(bn, none), bn.kind);
  Known running;
  running.flags["training"] = false;
  EXPECT_EQ(refinedKind(bn, running), OpKind::Broadcast);
  Known stats;
  stats.flags["training"] = true;
  EXPECT_EQ(refinedKind(bn, stats), OpKind::Reduction);
  Known instance;
  instance.flags["use_input_stats"] = false;
  EXPECT_EQ(refinedKind(row("instance_norm"), instance), OpKind::Broadcast);

  // Other ops keep the table's kind whatever their operands.
  EXPECT_EQ(refinedKind(row("relu"), running), OpKind::Elementwise);
  EXPECT_EQ(refinedKind(row("softmax"), eval), row("softmax").kind);
}
