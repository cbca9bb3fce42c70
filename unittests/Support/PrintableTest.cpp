//===- PrintableTest.cpp - Untrusted text and shortened messages ----------===//
#include "kb/Support/Printable.h"

#include "gtest/gtest.h"

using kb::clipText;

TEST(ClipText, ShortTextIsUnchanged) {
  EXPECT_EQ(clipText("a norm feeds a TF32 convolution", 40),
            "a norm feeds a TF32 convolution");
  EXPECT_EQ(clipText("exactly", 7), "exactly");
}

TEST(ClipText, CutsAtAWordsEnd) {
  // 20 bytes end inside "convolution": the cut goes back to "a TF32".
  EXPECT_EQ(clipText("a norm feeds a TF32 convolution", 23),
            "a norm feeds a TF32 ...");
  // Punctuation before the cut is not left dangling.
  EXPECT_EQ(clipText("first part, second part", 15), "first part ...");
}

TEST(ClipText, OneLongWordCutsAtACharactersEnd) {
  // "é" is two bytes (C3 A9); a cut after 5 bytes would split the third.
  std::string word = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";
  std::string clipped = clipText(word, 5);
  EXPECT_EQ(clipped, "\xC3\xA9\xC3\xA9 ...");
}

TEST(ClipText, KeepsMoreThanHalfOfWhatFits) {
  // The only space is early: cutting there would drop most of the text,
  // so the long word is cut instead.
  std::string text = "a " + std::string(40, 'x');
  std::string clipped = clipText(text, 20);
  EXPECT_EQ(clipped, "a " + std::string(18, 'x') + " ...");
}

TEST(Printable, ControlCharactersBecomeSpaces) {
  EXPECT_EQ(kb::printable("a\x1b[2Jb\n"), "a [2Jb ");
  EXPECT_EQ(kb::printable("a\tb\n", /*keepLines=*/true), "a\tb\n");
}
