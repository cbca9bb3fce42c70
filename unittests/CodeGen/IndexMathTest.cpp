//===- IndexMathTest.cpp - The emitters' index expressions, evaluated -----===//
//
// The emitters write index math as C++ text. These tests evaluate that text
// (integer literals with u / LL suffixes, casts to unsigned, + * / % and
// parentheses) for every index of small shapes and compare with offsets
// computed from coordinates.
//
//===----------------------------------------------------------------------===//

#include "kb/CodeGen/IndexMath.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <vector>

using namespace kb::codegen;

namespace {

/// Evaluates an index expression over one variable `i`.
class Eval {
public:
  Eval(const std::string &text, int64_t i) : s(text), i(i) {}
  int64_t run() {
    int64_t v = cond();
    skip();
    EXPECT_EQ(p, s.size()) << "trailing text in '" << s << "'";
    return v;
  }

private:
  void skip() {
    while (p < s.size() && s[p] == ' ')
      ++p;
  }
  bool eat(const std::string &t) {
    skip();
    if (s.compare(p, t.size(), t) != 0)
      return false;
    p += t.size();
    return true;
  }
  // c ? a : b, && of comparisons (< and >=), then arithmetic.
  int64_t cond() {
    int64_t c = conj();
    if (!eat("?"))
      return c;
    int64_t a = cond();
    EXPECT_TRUE(eat(":")) << "no ':' in '" << s << "'";
    int64_t b = cond();
    return c ? a : b;
  }
  int64_t conj() {
    int64_t v = compare();
    while (eat("&&"))
      v = compare() && v;
    return v;
  }
  int64_t compare() {
    int64_t v = sum();
    if (eat("<"))
      return v < sum();
    if (eat(">="))
      return v >= sum();
    return v;
  }
  int64_t sum() {
    int64_t v = product();
    for (;;) {
      if (eat("+"))
        v += product();
      else if (eat("-"))
        v -= product();
      else
        return v;
    }
  }
  int64_t product() {
    int64_t v = unary();
    for (;;) {
      if (eat("*"))
        v *= unary();
      else if (eat("/"))
        v /= unary();
      else if (eat("%"))
        v %= unary();
      else
        return v;
    }
  }
  int64_t unary() {
    if (eat("-"))
      return -unary();
    if (eat("(unsigned)"))
      return unary();
    if (eat("true"))
      return 1;
    for (const char *f : {"min(", "max("}) {
      if (!eat(f))
        continue;
      int64_t a = cond();
      EXPECT_TRUE(eat(",")) << "no ',' in '" << s << "'";
      int64_t b = cond();
      EXPECT_TRUE(eat(")")) << "unbalanced '" << s << "'";
      return f[1] == 'i' ? std::min(a, b) : std::max(a, b);
    }
    if (eat("(")) {
      int64_t v = cond();
      EXPECT_TRUE(eat(")")) << "unbalanced '" << s << "'";
      return v;
    }
    skip();
    if (p < s.size() && s[p] == 'i' &&
        (p + 1 == s.size() || !isalnum((unsigned char)s[p + 1]))) {
      ++p;
      return i;
    }
    size_t start = p;
    while (p < s.size() && isdigit((unsigned char)s[p]))
      ++p;
    EXPECT_LT(start, p) << "no literal at " << start << " in '" << s << "'";
    int64_t v = std::stoll(s.substr(start, p - start));
    if (!eat("LL"))
      eat("u");
    return v;
  }
  const std::string &s;
  int64_t i;
  size_t p = 0;
};

std::vector<int64_t> strides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (int64_t k = (int64_t)shape.size() - 2; k >= 0; --k)
    st[k] = st[k + 1] * shape[k + 1];
  return st;
}

/// For every index of permute(x, perm), the expression must give the offset
/// into x (row-major) of the element it names.
void checkPermute(const std::vector<int64_t> &in,
                  const std::vector<int64_t> &perm, bool narrow) {
  std::vector<int64_t> out;
  for (int64_t d : perm)
    out.push_back(in[d]);
  std::string expr = permuteOffset(in, perm, "i", narrow);
  std::vector<int64_t> inStride = strides(in), outStride = strides(out);
  int64_t n = product(out);
  for (int64_t idx = 0; idx < n; ++idx) {
    int64_t offset = 0;
    for (size_t k = 0; k < out.size(); ++k)
      offset += (idx / outStride[k] % out[k]) * inStride[perm[k]];
    ASSERT_EQ(Eval(expr, idx).run(), offset)
        << "index " << idx << " of '" << expr << "'";
  }
}

TEST(IndexMath, PermuteChannelsLastTo4dNCHW) {
  // [N, H, W, C] read as [N, C, H, W]: H and W merge into one run.
  checkPermute({2, 3, 5, 4}, {0, 3, 1, 2}, /*narrow=*/true);
  EXPECT_EQ(permuteOffset({2, 3, 5, 4}, {0, 3, 1, 2}, "i", true),
            "((unsigned)i % 15u) * 4u + (((unsigned)i / 15u) % 4u) + "
            "((unsigned)i / 60u) * 60u");
}

TEST(IndexMath, PermuteChannelsLastTo5dAndWide) {
  checkPermute({2, 3, 2, 5, 3}, {0, 4, 1, 2, 3}, /*narrow=*/false);
  checkPermute({3, 4, 5}, {2, 0, 1}, /*narrow=*/true);
}

TEST(IndexMath, PermuteSizeOneDims) {
  // Size-1 dims contribute nothing; the runs around them still merge.
  checkPermute({1, 3, 1, 4}, {0, 3, 1, 2}, true);
  checkPermute({2, 1, 1, 6}, {0, 3, 1, 2}, true);
}

TEST(IndexMath, PermuteIdentityIsTheIndex) {
  EXPECT_EQ(permuteOffset({2, 3, 4}, {0, 1, 2}, "i", false), "i");
}

TEST(IndexMath, ChannelsLastWalks) {
  // Step t of the walk is the output element whose coordinates, taken
  // with the channel's dim last, have linear index t: neighbouring steps
  // are neighbouring channels, and every output is visited once.
  struct Case {
    std::vector<int64_t> out, origins;
  };
  for (const Case &c : std::vector<Case>{
           {{2, 5, 3, 4}, {0, 1, 2, 3}}, // a pooling's [N, C, H, W]
           {{5, 3, 4}, {1, 2, 3}},       // a sum over N: [C, H, W]
           {{2, 5, 4}, {0, 1, 3}},       // over H
           {{2, 3, 4}, {0, 2, 3}}}) {    // over C: row-major
    std::string expr = channelsLastWalk(c.out, c.origins, "i");
    std::vector<int64_t> walk;
    for (size_t k = 0; k < c.out.size(); ++k)
      if (c.origins[k] != 1)
        walk.push_back(k);
    for (size_t k = 0; k < c.out.size(); ++k)
      if (c.origins[k] == 1)
        walk.push_back(k);
    std::vector<int64_t> st = strides(c.out);
    for (int64_t t = 0, rest; t < product(c.out); ++t) {
      int64_t offset = 0;
      rest = t;
      for (size_t j = walk.size(); j-- > 0;) {
        offset += rest % c.out[walk[j]] * st[walk[j]];
        rest /= c.out[walk[j]];
      }
      ASSERT_EQ(Eval(expr, t).run(), offset)
          << "step " << t << " of '" << expr << "'";
    }
  }
  EXPECT_EQ(channelsLastWalk({5, 3, 4}, {1, 2, 3}, "t"),
            "(t % 5LL) * 12LL + (t / 5LL)");
}

TEST(IndexMath, StridedOffsets) {
  // Transposed and permuted views, with size-1 dims and dims that merge:
  // the element at logical index i sits at sum(coord[d] * stride[d]).
  struct Case {
    std::vector<int64_t> shape, strides;
  };
  for (const Case &c : std::vector<Case>{{{4, 5, 6}, {6, 24, 1}},
                                         {{4, 8, 12}, {8, 1, 32}},
                                         {{2, 3, 1, 5}, {15, 1, 99, 3}},
                                         {{3, 4}, {1, 3}},
                                         {{2, 3, 4}, {24, 8, 2}}}) {
    for (bool narrow : {false, true}) {
      std::string expr = stridedOffset(c.shape, c.strides, "i", narrow);
      std::vector<int64_t> st = strides(c.shape);
      for (int64_t idx = 0; idx < product(c.shape); ++idx) {
        int64_t offset = 0;
        for (size_t d = 0; d < c.shape.size(); ++d)
          offset += idx / st[d] % c.shape[d] * c.strides[d];
        ASSERT_EQ(Eval(expr, idx).run(), offset) << "'" << expr << "'";
      }
    }
  }
}

TEST(IndexMath, BroadcastOffsets) {
  // A [C, 1, 1] bias against [N, C, H, W], and a [W] row.
  std::vector<int64_t> space{2, 3, 4, 5};
  for (auto in :
       std::vector<std::vector<int64_t>>{{3, 1, 1}, {5}, {2, 1, 4, 1}}) {
    std::string expr = broadcastOffset(in, space, "i", true);
    std::vector<int64_t> st = strides(space), inSt = strides(in);
    int64_t lead = space.size() - in.size();
    for (int64_t idx = 0; idx < product(space); ++idx) {
      int64_t offset = 0;
      for (size_t k = 0; k < in.size(); ++k) {
        int64_t coord = idx / st[k + lead] % space[k + lead];
        offset += (in[k] == 1 ? 0 : coord) * inSt[k];
      }
      ASSERT_EQ(Eval(expr, idx).run(), offset) << "'" << expr << "'";
    }
  }
}

/// coordinateOffset with each known coordinate written as an expression of
/// i must address what broadcastOffset addresses, for every index.
void checkCoordinates(const std::vector<int64_t> &in,
                      const std::vector<int64_t> &space,
                      const std::vector<bool> &known, bool narrow) {
  std::vector<int64_t> st = strides(space);
  std::vector<std::string> coords(space.size());
  for (size_t d = 0; d < space.size(); ++d)
    if (known[d])
      coords[d] =
          "i / " + std::to_string(st[d]) + " % " + std::to_string(space[d]);
  auto expr = coordinateOffset(in, space, coords, narrow);
  ASSERT_TRUE(expr.has_value());
  std::string want = broadcastOffset(in, space, "i", narrow);
  for (int64_t idx = 0; idx < product(space); ++idx)
    ASSERT_EQ(Eval(*expr, idx).run(), Eval(want, idx).run())
        << "index " << idx << " of '" << *expr << "' vs '" << want << "'";
}

TEST(IndexMath, CoordinatesPerChannelOperand) {
  // L2-3's tile loop knows (n, c, w) of [N, C, D*H, W]; a [C, 1, 1] bias
  // needs only c.
  checkCoordinates({3, 1, 1}, {2, 3, 4, 5}, {true, true, false, true}, true);
  checkCoordinates({3, 1, 1, 1}, {2, 3, 2, 2, 5},
                   {true, true, false, false, true}, false);
  EXPECT_EQ(
      *coordinateOffset({3, 1, 1}, {2, 3, 4, 5}, {"n", "tc", "", "tw"}, true),
      "((unsigned)(tc))");
}

TEST(IndexMath, CoordinatesRowsAndFullTensors) {
  checkCoordinates({5}, {2, 3, 4, 5}, {false, false, false, true}, true);
  checkCoordinates({2, 1, 4, 1}, {2, 3, 4, 5}, {true, false, true, false},
                   false);
  checkCoordinates({2, 3, 4, 5}, {2, 3, 4, 5}, {true, true, true, true}, true);
  // Size-1 dims of the space need no coordinate either.
  checkCoordinates({1, 3, 1}, {2, 1, 3, 1}, {false, false, true, false}, true);
  EXPECT_EQ(*coordinateOffset({1, 1}, {4, 5}, {"", ""}, false), "0");
}

TEST(IndexMath, CoordinatesUnknownDimNeeded) {
  // The operand varies along a dim whose coordinate the loop does not have:
  // the caller falls back to broadcastOffset.
  EXPECT_FALSE(
      coordinateOffset({4, 1}, {2, 3, 4, 5}, {"n", "c", "", "w"}, true));
  EXPECT_FALSE(coordinateOffset({3}, {3}, {"c", ""}, true));
}

} // namespace

TEST(IndexMath, WidestAdaptiveWindowMatchesEveryWindow) {
  // Against the windows themselves: [floor(q in / out), ceil((q + 1) in /
  // out)) for every output q.
  for (int64_t in = 1; in <= 120; ++in)
    for (int64_t out = 1; out <= 120; ++out) {
      int64_t widest = 1;
      for (int64_t q = 0; q < out; ++q)
        widest =
            std::max(widest, ((q + 1) * in + out - 1) / out - (q * in) / out);
      ASSERT_EQ(widestAdaptiveWindow(in, out), widest)
          << "in " << in << " out " << out;
    }
  EXPECT_EQ(widestAdaptiveWindow(0, 4), 1);
  EXPECT_EQ(widestAdaptiveWindow(64, int64_t(1) << 32), 1);
}

/// Every index of an index map's result against the offset into its input
/// computed from coordinates (`from` maps the result's coordinates to the
/// input's, or returns false where the element is padding). 32-bit
/// expressions are compared modulo 2^32, as unsigned math computes them.
void checkMap(const std::string &expr, const std::vector<int64_t> &in,
              const std::vector<int64_t> &out, bool narrow,
              const std::function<bool(std::vector<int64_t> &)> &from,
              const std::string &inside = "") {
  std::vector<int64_t> inStride = strides(in), outStride = strides(out);
  for (int64_t idx = 0; idx < product(out); ++idx) {
    std::vector<int64_t> c(out.size());
    for (size_t k = 0; k < out.size(); ++k)
      c[k] = idx / outStride[k] % out[k];
    bool valid = from(c);
    if (!inside.empty())
      ASSERT_EQ(Eval(inside, idx).run() != 0, valid)
          << "index " << idx << " of '" << inside << "'";
    if (!valid)
      continue;
    int64_t offset = 0;
    for (size_t k = 0; k < in.size(); ++k)
      offset += c[k] * inStride[k];
    int64_t got = Eval(expr, idx).run();
    if (narrow)
      got &= 0xffffffffLL;
    ASSERT_EQ(got, offset) << "index " << idx << " of '" << expr << "'";
  }
}

TEST(IndexMath, RollOffsets) {
  // Swin's roll by -3 over dims 1 and 2 of [2, 8, 8, 4], and a flattened
  // roll; a coordinate c reads (c - shift) mod n.
  for (bool narrow : {true, false}) {
    std::vector<int64_t> shape = {2, 8, 8, 4};
    checkMap(rollOffset(shape, {-3, -3}, {1, 2}, "i", narrow), shape, shape,
             narrow, [](std::vector<int64_t> &c) {
               c[1] = ((c[1] + 3) % 8 + 8) % 8;
               c[2] = ((c[2] + 3) % 8 + 8) % 8;
               return true;
             });
    checkMap(rollOffset({3, 5}, {7}, {}, "i", narrow), {3, 5}, {3, 5}, narrow,
             [](std::vector<int64_t> &c) {
               int64_t f = ((c[0] * 5 + c[1] - 7) % 15 + 15) % 15;
               c = {f / 5, f % 5};
               return true;
             });
    checkMap(rollOffset({4, 6}, {2}, {0}, "i", narrow), {4, 6}, {4, 6}, narrow,
             [](std::vector<int64_t> &c) {
               c[0] = (c[0] + 2) % 4;
               return true;
             });
  }
  EXPECT_EQ(rollOffset({4, 6}, {6}, {1}, "i", true), "(unsigned)i");
}

TEST(IndexMath, SliceAndSelectOffsets) {
  checkMap(sliceOffset({4, 9, 3}, {4, 3, 3}, 1, 2, 3, "i", true), {4, 9, 3},
           {4, 3, 3}, true, [](std::vector<int64_t> &c) {
             c[1] = 2 + 3 * c[1];
             return true;
           });
  checkMap(sliceOffset({5, 6}, {2, 6}, 0, 3, 1, "i", false), {5, 6}, {2, 6},
           false, [](std::vector<int64_t> &c) {
             c[0] += 3;
             return true;
           });
  checkMap(selectOffset({3, 4, 5}, 1, 2, "i", true), {3, 4, 5}, {3, 5}, true,
           [](std::vector<int64_t> &c) {
             c = {c[0], 2, c[1]};
             return true;
           });
}

TEST(IndexMath, PadOffsets) {
  // [2, 3, 4] padded (1, 2) on the last dim, (2, 0) on the middle one;
  // outside x the condition is false and the offset stays inside x.
  std::vector<int64_t> in = {2, 3, 4}, out = {2, 5, 7};
  auto [inside, off] = padOffset(in, out, {1, 2, 2, 0}, "i");
  checkMap(
      off, in, out, false,
      [](std::vector<int64_t> &c) {
        c[1] -= 2;
        c[2] -= 1;
        return c[1] >= 0 && c[1] < 3 && c[2] >= 0 && c[2] < 4;
      },
      inside);
  for (int64_t idx = 0; idx < product(out); ++idx) {
    int64_t o = Eval(off, idx).run();
    EXPECT_TRUE(o >= 0 && o < product(in)) << idx;
  }
  // A negative pad crops.
  auto [in2, off2] = padOffset({6}, {3}, {-2, -1}, "i");
  checkMap(
      off2, {6}, {3}, false,
      [](std::vector<int64_t> &c) {
        c[0] += 2;
        return true;
      },
      in2);
}
