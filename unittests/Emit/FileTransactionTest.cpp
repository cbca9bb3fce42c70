//===- FileTransactionTest.cpp - Several files replaced together ----------===//

#include "kb/Emit/FileTransaction.h"
#include "kb/Support/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace kb;

namespace {

struct TempDir {
  llvm::SmallString<128> path;
  TempDir() { llvm::sys::fs::createUniqueDirectory("kb-tx", path); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const char *name) const {
    return (path + "/" + name).str();
  }
};

void write(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream f(path, ec);
  f << text;
}

std::string read(const std::string &path) {
  auto t = readInputText(path);
  if (!t) {
    llvm::consumeError(t.takeError());
    return "<missing>";
  }
  return *t;
}

} // namespace

TEST(FileTransaction, CommitsEveryFileWithItsMode) {
  TempDir d;
  write(d.file("a"), "old a");
  llvm::sys::fs::setPermissions(d.file("a"), llvm::sys::fs::perms(0750));
  {
    FileTransaction tx(d.file(".journal"));
    ASSERT_FALSE(bool(tx.stage(d.file("a"), "new a")));
    ASSERT_FALSE(bool(tx.stage(d.file("b"), "new b")));
    EXPECT_EQ(read(d.file("a")), "old a"); // nothing until commit
    ASSERT_FALSE(bool(tx.commit()));
  }
  EXPECT_EQ(read(d.file("a")), "new a");
  EXPECT_EQ(read(d.file("b")), "new b");
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status(d.file("a"), st));
  EXPECT_EQ(st.permissions(), llvm::sys::fs::perms(0750));
  std::error_code ec;
  int left = 0;
  for (llvm::sys::fs::directory_iterator it(d.path, ec), end; it != end && !ec;
       it.increment(ec))
    ++left;
  EXPECT_EQ(left, 2); // no staged, saved or journal file
}

TEST(FileTransaction, AFailedRenamePutsEveryFileBack) {
  TempDir d;
  write(d.file("a"), "old a");
  write(d.file("c"), "old c");
  FileTransaction tx(d.file(".journal"));
  ASSERT_FALSE(bool(tx.stage(d.file("a"), "new a")));
  ASSERT_FALSE(bool(tx.stage(d.file("b"), "new b")));
  ASSERT_FALSE(bool(tx.stage(d.file("c"), "new c")));
  // The third rename fails (its staged file vanished) after two succeeded.
  llvm::sys::fs::remove(d.file("c") + ".kb-new");
  llvm::Error err = tx.commit();
  ASSERT_TRUE(bool(err));
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("every file was put back"), std::string::npos) << msg;
  EXPECT_EQ(read(d.file("a")), "old a");
  EXPECT_EQ(read(d.file("b")), "<missing>");
  EXPECT_EQ(read(d.file("c")), "old c");
  EXPECT_FALSE(llvm::sys::fs::exists(d.file(".journal")));
  EXPECT_FALSE(llvm::sys::fs::exists(d.file("a") + ".kb-prev"));
}

TEST(FileTransaction, UncommittedLeavesNothingAndTargetsMustBeFiles) {
  TempDir d;
  llvm::sys::fs::create_directory(d.file("dir"));
  {
    FileTransaction tx(d.file(".journal"));
    ASSERT_FALSE(bool(tx.stage(d.file("a"), "new a")));
    llvm::Error err = tx.stage(d.file("dir"), "x");
    ASSERT_TRUE(bool(err));
    EXPECT_NE(llvm::toString(std::move(err)).find("not a regular file"),
              std::string::npos);
  }
  EXPECT_FALSE(llvm::sys::fs::exists(d.file("a")));
  EXPECT_FALSE(llvm::sys::fs::exists(d.file("a") + ".kb-new"));
}

TEST(FileTransaction, RecoverUndoesAnInterruptedCommit) {
  // Killed after replacing "a" (old copy aside) and creating "b", before
  // "c": recover puts "a" back, removes "b", leaves "c" and its staged copy
  // gone.
  TempDir d;
  write(d.file("a"), "new a");
  write(d.file("a.kb-prev"), "old a");
  write(d.file("b"), "new b");
  write(d.file("c"), "old c");
  write(d.file("c.kb-new"), "new c");
  write(d.file(".journal"),
        "[{\"target\": \"" + d.file("a") + "\", \"staged\": \"" + d.file("a.kb-new") +
            "\", \"saved\": \"" + d.file("a.kb-prev") + "\"}, {\"target\": \"" +
            d.file("b") + "\", \"staged\": \"" + d.file("b.kb-new") +
            "\", \"saved\": \"\"}, {\"target\": \"" + d.file("c") +
            "\", \"staged\": \"" + d.file("c.kb-new") + "\", \"saved\": \"" +
            d.file("c.kb-prev") + "\"}]");
  auto r = FileTransaction::recover(d.file(".journal"));
  ASSERT_TRUE(bool(r));
  EXPECT_TRUE(*r);
  EXPECT_EQ(read(d.file("a")), "old a");
  EXPECT_EQ(read(d.file("b")), "<missing>");
  EXPECT_EQ(read(d.file("c")), "old c");
  EXPECT_FALSE(llvm::sys::fs::exists(d.file("c.kb-new")));
  EXPECT_FALSE(llvm::sys::fs::exists(d.file(".journal")));
  auto again = FileTransaction::recover(d.file(".journal"));
  ASSERT_TRUE(bool(again));
  EXPECT_FALSE(*again);
}
