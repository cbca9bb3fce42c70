//===- StoreTest.cpp - The verified-kernel store --------------------------===//

#include "kb/Model/Store.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace kb::model;

TEST(KernelStore, SignatureIgnoresRegionNamesNotShapesOrGpu) {
  std::string a = "kb.kernel @kb_region_3 attributes {id = 3 : i64} {\n  tensor<4x8xf32>\n}";
  std::string b = "kb.kernel @kb_region_7 attributes {id = 7 : i64} {\n  tensor<4x8xf32>\n}";
  std::string c = "kb.kernel @kb_region_3 attributes {id = 3 : i64} {\n  tensor<4x9xf32>\n}";
  EXPECT_EQ(KernelStore::signature(a, "H200"), KernelStore::signature(b, "H200"));
  EXPECT_NE(KernelStore::signature(a, "H200"), KernelStore::signature(c, "H200"));
  EXPECT_NE(KernelStore::signature(a, "H200"), KernelStore::signature(a, "A100"));
  EXPECT_EQ(KernelStore::signature(a, "H200").size(), 64u);
}

TEST(KernelStore, PutGetListPrune) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("kb-store", dir);
  KernelStore store((dir + "/store").str());
  EXPECT_FALSE(store.get("nope").has_value());
  StoreEntry old;
  old.signature = std::string(64, 'a');
  old.source = "__global__ void k() {}";
  old.kernelMs = 0.25;
  old.storedAt = 1000;
  ASSERT_FALSE(bool(store.put(old)));
  StoreEntry fresh = old;
  fresh.signature = std::string(64, 'b');
  fresh.storedAt = 0; // stamped now
  ASSERT_FALSE(bool(store.put(fresh)));
  auto got = store.get(old.signature);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->source, old.source);
  EXPECT_DOUBLE_EQ(got->kernelMs, 0.25);
  auto all = store.list();
  ASSERT_TRUE(bool(all));
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].signature, fresh.signature); // newest first
  auto n = store.prune(/*olderThan=*/2000);
  ASSERT_TRUE(bool(n));
  EXPECT_EQ(*n, 1);
  EXPECT_FALSE(store.get(old.signature).has_value());
  EXPECT_TRUE(store.get(fresh.signature).has_value());
  llvm::sys::fs::remove_directories(dir);
}

TEST(KernelStore, EditedEntriesNeverReachOutsideTheStore) {
  // Entry files are anyone's to edit: one whose signature is a path, or
  // not its own file's name, is no entry, and prune deletes only entries.
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("kb-store", dir);
  std::string storeDir = (dir + "/store").str(),
              victim = (dir + "/victim.json").str();
  KernelStore store(storeDir);
  StoreEntry e;
  e.signature = std::string(64, 'c');
  e.source = "__global__ void k() {}";
  e.storedAt = 1000;
  ASSERT_FALSE(bool(store.put(e)));
  auto write = [](const std::string &path, const std::string &text) {
    std::error_code ec;
    llvm::raw_fd_ostream f(path, ec);
    f << text;
  };
  write(victim, "{}");
  write(storeDir + "/" + std::string(64, 'd') + ".json",
        R"({"signature": "../victim", "source": "x", "stored_at": 1})");
  write(storeDir + "/" + std::string(64, 'e') + ".json",
        R"({"signature": ")" + std::string(64, 'f') +
            R"(", "source": "x", "stored_at": 1})");
  auto all = store.list();
  ASSERT_TRUE(bool(all));
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].signature, e.signature);
  EXPECT_FALSE(store.get("../victim").has_value());
  auto n = store.prune(/*olderThan=*/0);
  ASSERT_TRUE(bool(n));
  EXPECT_EQ(*n, 1);
  EXPECT_TRUE(llvm::sys::fs::exists(victim));
  llvm::sys::fs::remove_directories(dir);
}

TEST(KernelStore, SimilarityIsOpOverlap) {
  EXPECT_DOUBLE_EQ(KernelStore::similarity("gelu -> add", "gelu -> add"), 1.0);
  EXPECT_DOUBLE_EQ(KernelStore::similarity("gelu -> add", "gelu -> add -> mul"), 2.0 / 3);
  EXPECT_DOUBLE_EQ(KernelStore::similarity("add -> add", "add"), 0.5); // multisets
  EXPECT_DOUBLE_EQ(KernelStore::similarity("relu", "softmax"), 0.0);
  EXPECT_DOUBLE_EQ(KernelStore::similarity("", ""), 0.0);
}

TEST(KernelStore, SimilarRanksByOverlapKindAndGpu) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("kb-store", dir);
  KernelStore store((dir + "/store").str());
  auto add = [&](char sig, const char *kind, const char *ops, const char *gpu,
                 double ms) {
    StoreEntry e;
    e.signature = std::string(64, sig);
    e.kind = kind;
    e.ops = ops;
    e.gpu = gpu;
    e.source = std::string("// ") + ops;
    e.kernelMs = ms;
    e.storedAt = 1000;
    ASSERT_FALSE(bool(store.put(e)));
  };
  add('a', "pointwise", "relu -> add", "NVIDIA H200", 0.1);
  add('b', "pointwise", "gelu -> add -> mul", "NVIDIA H200", 0.2);
  add('c', "reduction", "sum", "NVIDIA H200", 0.1);          // nothing shared
  add('d', "pointwise", "gelu -> add -> mul", "NVIDIA A100", 0.1); // other GPU
  add('e', "pointwise", "gelu -> add", "NVIDIA H200", 0.1);   // the region itself
  auto got = store.similar("pointwise", "gelu -> add", "NVIDIA H200",
                           std::string(64, 'e'), 3);
  ASSERT_TRUE(bool(got));
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].signature, std::string(64, 'b')); // 2/3 + kind + gpu
  EXPECT_EQ((*got)[1].signature, std::string(64, 'd')); // 2/3 + kind
  EXPECT_EQ((*got)[2].signature, std::string(64, 'a')); // 1/3 + kind + gpu
  auto none = KernelStore((dir + "/empty").str()).similar("pointwise", "relu", "", "", 2);
  ASSERT_TRUE(bool(none));
  EXPECT_TRUE(none->empty());
  llvm::sys::fs::remove_directories(dir);
}
