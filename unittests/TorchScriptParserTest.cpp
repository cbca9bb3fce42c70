//===- TorchScriptParserTest.cpp - Parser unit tests ----------------------===//

#include "kb/Import/TorchScriptIR.h"
#include "kb/Import/TorchScriptImporter.h"

#include "llvm/Support/JSON.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

using namespace kb::ts;

namespace {

Graph parseOk(llvm::StringRef text) {
  auto g = parseGraph(text, "t.graph.txt");
  if (!g) {
    ADD_FAILURE() << llvm::toString(g.takeError());
    return Graph();
  }
  return std::move(*g);
}

std::string parseError(llvm::StringRef text) {
  auto g = parseGraph(text, "t.graph.txt");
  if (g) {
    ADD_FAILURE() << "expected a parse error";
    return "";
  }
  return llvm::toString(g.takeError());
}

} // namespace

TEST(TorchScriptParser, TensorTypesKeepShapeStridesAndDevice) {
  Graph g = parseOk("graph(%x.1 : Float(2, *, 3, strides=[9, 3, 1], "
                    "requires_grad=0, device=cuda:1)):\n  return (%x.1)\n");
  ASSERT_EQ(g.body.params.size(), 1u);
  const Type &t = g.body.params[0].type;
  EXPECT_EQ(t.kind, Type::Kind::Tensor);
  EXPECT_EQ(t.name, "Float");
  ASSERT_EQ(t.sizes.size(), 3u);
  EXPECT_EQ(*t.sizes[0], 2);
  EXPECT_FALSE(t.sizes[1].has_value());
  EXPECT_EQ(t.strides, (std::vector<int64_t>{9, 3, 1}));
  EXPECT_EQ(t.device, "cuda:1");
}

TEST(TorchScriptParser, ZeroDimTensorIsRankedWithNoSizes) {
  Graph g = parseOk("graph():\n  %c : Double(requires_grad=0, device=cpu) = "
                    "prim::Constant[value={-0.5}]()\n  return (%c)\n");
  const Node &n = g.body.nodes[0];
  EXPECT_TRUE(n.outputs[0].type.hasSizes);
  EXPECT_TRUE(n.outputs[0].type.sizes.empty());
  auto *lit = std::get_if<TensorLiteral>(&n.attrs[0].value.v);
  ASSERT_NE(lit, nullptr);
  EXPECT_EQ(*lit->scalar, -0.5);
}

TEST(TorchScriptParser, EmptyTensorConstants) {
  // torch prints an empty tensor constant with its type and sizes (a
  // GPT-2 trace); one printed with values cannot be read from the text.
  Graph g = parseOk("graph():\n  %c : Float(0, strides=[1], requires_grad=0, "
                    "device=cpu) = prim::Constant[value=[ CPUFloatType{0} "
                    "]]()\n  %d : Long(2, 0, strides=[1, 1]) = "
                    "prim::Constant[value=[ CUDALongType{2,0} ]]()\n"
                    "  return (%c, %d)\n");
  auto *lit = std::get_if<TensorLiteral>(&g.body.nodes[0].attrs[0].value.v);
  ASSERT_NE(lit, nullptr);
  EXPECT_FALSE(lit->scalar);
  EXPECT_EQ(lit->text, "[ CPUFloatType{0} ]");
  EXPECT_EQ(*lit->emptySizes, (std::vector<int64_t>{0}));
  auto *two = std::get_if<TensorLiteral>(&g.body.nodes[1].attrs[0].value.v);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(*two->emptySizes, (std::vector<int64_t>{2, 0}));
  std::string err = parseError(
      "graph():\n  %c : Float(3) = prim::Constant[value=[ CPUFloatType{3} "
      "]]()\n  return (%c)\n");
  EXPECT_NE(err.find("t.graph.txt:2:"), std::string::npos) << err;
  EXPECT_NE(err.find("a tensor constant with elements but no values"),
            std::string::npos)
      << err;
}

TEST(TorchScriptParser, TensorConstantsPrintedWithValues) {
  // torch prints up to 10 elements with 4 decimals, newlines made spaces,
  // a common scale factor first where the magnitudes differ: only the
  // trailer's type and sizes are kept (the values come from params.json).
  Graph g = parseOk(
      "graph():\n  %a : Float(3, 2, strides=[2, 1]) = prim::Constant[value= "
      "1.0000  2.5000  3.0000  4.1250  5.0000  6.0000 [ CPUFloatType{3,2} "
      "]]()\n  %b : Long(2, strides=[1]) = prim::Constant[value= 1  2 [ "
      "CPULongType{2} ]]()\n  %c : Float(3, strides=[1]) = "
      "prim::Constant[value= 1.0e-05 *  1.0000 -inf nan [ CPUFloatType{3} "
      "]]()\n  %d : Float(2, strides=[1]) = prim::Constant[value=-inf  "
      "1.0000 [ CUDAFloatType{2} ]]()\n  return (%a, %b, %c, %d)\n");
  std::vector<std::vector<int64_t>> sizes = {{3, 2}, {2}, {3}, {2}};
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto *lit = std::get_if<TensorLiteral>(&g.body.nodes[i].attrs[0].value.v);
    ASSERT_NE(lit, nullptr) << i;
    EXPECT_FALSE(lit->scalar) << i;
    EXPECT_FALSE(lit->emptySizes) << i;
    ASSERT_TRUE(lit->printedSizes) << i;
    EXPECT_EQ(*lit->printedSizes, sizes[i]) << i;
  }
  auto *a = std::get_if<TensorLiteral>(&g.body.nodes[0].attrs[0].value.v);
  EXPECT_EQ(a->text, "[ CPUFloatType{3,2} ]");
  // Values without the trailer are an error at the token that breaks off.
  std::string err = parseError("graph():\n  %a : Float(2) = "
                               "prim::Constant[value= 1.0000  2.0000]()\n"
                               "  return (%a)\n");
  EXPECT_NE(err.find("t.graph.txt:2:"), std::string::npos) << err;
  EXPECT_NE(err.find("'[' before the tensor constant's type"),
            std::string::npos)
      << err;
}

TEST(TorchScriptParser, CompositeTypes) {
  Graph g = parseOk(
      "graph(%a : int[], %b : Tensor?, %c : (Tensor, int), %d : "
      "__torch__.torch.nn.Conv2d, %e : Dict(str, Tensor), %f : "
      "List[Tensor], %g : int[]?):\n  return (%a)\n");
  const auto &p = g.body.params;
  EXPECT_EQ(p[0].type.kind, Type::Kind::List);
  EXPECT_EQ(p[0].type.elems[0].kind, Type::Kind::Int);
  EXPECT_EQ(p[1].type.kind, Type::Kind::Optional);
  EXPECT_EQ(p[2].type.kind, Type::Kind::Tuple);
  EXPECT_EQ(p[2].type.elems.size(), 2u);
  EXPECT_EQ(p[3].type.kind, Type::Kind::Class);
  EXPECT_EQ(p[4].type.kind, Type::Kind::Dict);
  EXPECT_EQ(p[5].type.kind, Type::Kind::List);
  EXPECT_EQ(p[6].type.kind, Type::Kind::Optional);
  EXPECT_EQ(p[6].type.elems[0].kind, Type::Kind::List);
}

TEST(TorchScriptParser, AttributesScopesAndComments) {
  Graph g = parseOk(
      "graph(%x : Tensor):\n"
      "  # a whole-line comment\n"
      "  %l : int[] = prim::Constant[value=[1, -2, 3]]()\n"
      "  %f : float = prim::Constant[value=1.0000000000000001e-05]() # a.py:1:0\n"
      "  %i : float = prim::Constant[value=-inf]()\n"
      "  %y : Tensor = aten::relu(%x), scope: __module.a/__module.a.b # "
      "/p/m.py:12:4\n"
      "  return (%y)\n");
  ASSERT_EQ(g.body.nodes.size(), 4u);
  auto &list = std::get<AttrList>(g.body.nodes[0].attrs[0].value.v);
  EXPECT_EQ(std::get<int64_t>(list[1].v), -2);
  EXPECT_DOUBLE_EQ(std::get<double>(g.body.nodes[1].attrs[0].value.v), 1e-5);
  EXPECT_EQ(g.body.nodes[1].sourceComment, "a.py:1:0");
  EXPECT_TRUE(std::isinf(std::get<double>(g.body.nodes[2].attrs[0].value.v)));
  EXPECT_EQ(g.body.nodes[3].scope, "__module.a/__module.a.b");
  EXPECT_EQ(g.body.nodes[3].sourceComment, "/p/m.py:12:4");
  // The whole-line comment is not attached to the next node.
  EXPECT_TRUE(g.body.nodes[0].sourceComment.empty());
}

TEST(TorchScriptParser, NestedBlocksAndMultipleOutputs) {
  Graph g = parseOk("graph(%c : bool, %x : Tensor):\n"
                    "  %a : Tensor, %b : Tensor = prim::If(%c)\n"
                    "    block0():\n"
                    "      -> (%x, %x)\n"
                    "    block1():\n"
                    "      %n : Tensor = aten::neg(%x)\n"
                    "      -> (%n, %x)\n"
                    "  prim::RaiseException(%a)\n"
                    "  return (%a, %b)\n");
  ASSERT_EQ(g.body.nodes.size(), 2u);
  EXPECT_EQ(g.body.nodes[0].outputs.size(), 2u);
  ASSERT_EQ(g.body.nodes[0].blocks.size(), 2u);
  EXPECT_EQ(g.body.nodes[0].blocks[1].nodes.size(), 1u);
  EXPECT_TRUE(g.body.nodes[1].outputs.empty());
}

TEST(TorchScriptParser, ErrorsNameFileLineAndColumn) {
  std::string e = parseError("graph(%x : Tensor):\n  %y : Tensor = relu(%x)\n"
                             "  return (%y)\n");
  EXPECT_NE(e.find("t.graph.txt:2:17: error: expected an operator name"),
            std::string::npos)
      << e;
}

TEST(TorchScriptParser, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string type;
  for (int i = 0; i < 100000; ++i)
    type += "(";
  std::string e = parseError("graph(%x : " + type + "Tensor):\n return (%x)\n");
  EXPECT_NE(e.find("nesting deeper than"), std::string::npos) << e;
  std::string list = "graph():\n  %c : int[] = prim::Constant[value=";
  for (int i = 0; i < 100000; ++i)
    list += "[";
  e = parseError(list);
  EXPECT_NE(e.find("nesting deeper than"), std::string::npos) << e;
}

TEST(TorchScriptParser, RandomMutationsNeverCrash) {
  const std::string seed =
      "graph(%self.1 : __torch__.M,\n"
      "      %x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n"
      "  %w : Tensor = prim::GetAttr[name=\"w\"](%self.1)\n"
      "  %1 : int = prim::Constant[value=1]() # m.py:1:0\n"
      "  %l : int[] = prim::ListConstruct(%1, %1), scope: __module.m\n"
      "  %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = "
      "aten::add(%x, %w, %1)\n"
      "  %z : Tensor = prim::If(%1)\n    block0():\n      -> (%y)\n"
      "    block1():\n      -> (%x)\n"
      "  return (%z)\n";
  const std::string alphabet = "%()[]{},:=-><?*#\"'.\n 0123456789abcxyz_";
  std::mt19937 rng(1234);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = seed;
    int edits = 1 + rng() % 4;
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % (s.size() + 1);
      switch (rng() % 3) {
      case 0: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      case 1: if (pos < s.size()) s.erase(pos, 1 + rng() % 8); break;
      default: s = s.substr(0, pos); break;
      }
    }
    auto g = parseGraph(s, "fuzz.txt");
    if (g)
      ++parsed;
    else
      EXPECT_NE(llvm::toString(g.takeError()).find("fuzz.txt:"),
                std::string::npos);
  }
  EXPECT_GT(parsed, 0);
}

// params.json's "constants" (kb-export): exact values by value name; a
// malformed record is an error naming the file and the constant.
TEST(TorchScriptParser, ParamsConstants) {
  auto parse = [](llvm::StringRef text) {
    auto json = llvm::json::parse(text);
    EXPECT_TRUE(bool(json));
    return kb::paramsFromJson(*json->getAsObject(), "p.params.json");
  };
  auto ok = parse(R"({"constants": [{"value": "11", "dtype": "float32",
      "shape": [2], "values": [0.3333333432674408, "-inf"]}]})");
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  const kb::ConstantData &c = ok->constants.at("11");
  EXPECT_EQ(c.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(c.values[0], 0.3333333432674408);
  EXPECT_TRUE(std::isinf(c.values[1]) && c.values[1] < 0);
  auto count = parse(R"({"constants": [{"value": "7", "shape": [3],
      "values": [1, 2]}]})");
  ASSERT_FALSE(bool(count));
  std::string err = llvm::toString(count.takeError());
  EXPECT_NE(err.find("p.params.json: error: 'constants': constant %7 has 2 "
                     "values for 3 elements"),
            std::string::npos)
      << err;
  auto word = parse(R"({"constants": [{"value": "7", "shape": [1],
      "values": ["x"]}]})");
  ASSERT_FALSE(bool(word));
  EXPECT_NE(llvm::toString(word.takeError()).find("not a number"),
            std::string::npos);
}
