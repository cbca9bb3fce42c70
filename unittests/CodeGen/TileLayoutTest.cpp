//===- TileLayoutTest.cpp - Tile mode's shared-memory slab layout ---------===//
//
// Tile mode (channels-last reads into a layer_norm over W) stages a [W, C]
// slab in shared memory with a padded pitch; a group of lanesPerRow(W) lanes
// walks each channel row. These tests check the property the pitch is chosen
// for, over every small (C, W): in each step of the walk the 32 lanes of a
// warp read 32 different banks, and the load side (consecutive channels)
// stays conflict-free.
//
//===----------------------------------------------------------------------===//

#include "kb/CodeGen/RowLayout.h"

#include "gtest/gtest.h"

#include <set>

using namespace kb::codegen;

namespace {

TEST(TileLayout, LanesAreAPowerOfTwoDividingAWarp) {
  for (int64_t W = 1; W <= 1024; ++W) {
    int64_t L = lanesPerRow(W);
    EXPECT_TRUE(L >= 2 && L <= 32 && (L & (L - 1)) == 0) << W;
    EXPECT_LE((W + L - 1) / L, 32) << "more than 32 elements per lane, W=" << W;
  }
}

TEST(TileLayout, GroupWalkHitsEveryBankOnce) {
  for (int64_t W = 1; W <= 300; ++W) {
    int64_t L = lanesPerRow(W), R = 32 / L;
    for (int64_t C = 1; C <= 130; ++C) {
      int64_t P = tilePitch(C, W);
      ASSERT_GE(P, C);
      ASSERT_LT(P - C, 32) << "C=" << C << " W=" << W;
      // Warp lane t: row g = t / L (of the warp's R rows starting at cb0),
      // element c = t % L + L * k. Address c * P + row.
      for (int64_t cb0 : {int64_t(0), int64_t(8), int64_t(R * 3)})
        for (int64_t k = 0; k < 3; ++k) {
          std::set<int64_t> banks;
          for (int64_t t = 0; t < 32; ++t) {
            int64_t g = cb0 + t / L, c = t % L + L * k;
            banks.insert((c * P + g) % 32);
          }
          EXPECT_EQ(banks.size(), 32u)
              << "C=" << C << " W=" << W << " k=" << k << " pitch " << P;
        }
    }
  }
}

TEST(TileLayout, LoadSideIsConflictFreeForWholeWarpRows) {
  // The load stores element e = tw * C + tc at tw * P + tc. With C a
  // multiple of 32 a warp's 32 consecutive e lie in one slab row: 32
  // consecutive addresses. (A warp straddling two rows, C not a multiple of
  // 32, can meet a 2-way conflict where the pad puts the runs 32 apart.)
  for (int64_t W : {1, 12, 64, 100, 256})
    for (int64_t C = 32; C <= 256; C += 32) {
      int64_t P = tilePitch(C, W);
      for (int64_t e0 = 0; e0 + 32 <= W * C; e0 += 32) {
        std::set<int64_t> banks;
        for (int64_t e = e0; e < e0 + 32; ++e)
          banks.insert(((e / C) * P + e % C) % 32);
        EXPECT_EQ(banks.size(), 32u) << "C=" << C << " W=" << W;
      }
    }
}

} // namespace
