#include "sched/stop_matcher.h"

#include <gtest/gtest.h>

namespace arc {
namespace {

// Feeds `text` split at every pair of points; the output must not depend on the split.
std::string run(const std::vector<std::string>& stops, const std::vector<std::string>& pieces,
                bool* matched = nullptr, std::string* which = nullptr) {
  StopMatcher m(stops);
  std::string out;
  for (const auto& p : pieces) out += m.feed(p);
  out += m.flush();
  if (matched) *matched = m.matched();
  if (which) *which = m.matched_stop();
  return out;
}

TEST(StopMatcher, StopsAcrossTokenBoundariesAtEverySplit) {
  const std::string text = "Hello END world";
  for (size_t a = 0; a <= text.size(); ++a) {
    for (size_t b = a; b <= text.size(); ++b) {
      bool matched = false;
      std::string which;
      std::string out =
          run({"END", "xyz"}, {text.substr(0, a), text.substr(a, b - a), text.substr(b)}, &matched,
              &which);
      EXPECT_EQ(out, "Hello ") << a << "," << b;
      EXPECT_TRUE(matched);
      EXPECT_EQ(which, "END");
    }
  }
}

TEST(StopMatcher, HoldsOnlyWhatCouldStartAStop) {
  StopMatcher m({"</stop>"});
  EXPECT_EQ(m.feed("abc</st"), "abc");  // "</st" might begin the stop string
  EXPECT_EQ(m.feed("ay>"), "</stay>");  // it did not
  EXPECT_EQ(m.feed("<"), "");
  EXPECT_EQ(m.flush(), "<");  // the end resolves the ambiguity
  EXPECT_FALSE(m.matched());
}

TEST(StopMatcher, EarliestStopWinsAndNothingAfterIt) {
  bool matched = false;
  std::string which;
  EXPECT_EQ(run({"bb", "a"}, {"xxabb yy"}, &matched, &which), "xx");
  EXPECT_EQ(which, "a");
  StopMatcher m({"!"});
  EXPECT_EQ(m.feed("hi!"), "hi");
  EXPECT_EQ(m.feed("more"), "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, NeverSplitsAUtf8Character) {
  // "é" is C3 A9; a stop string starting with C3 must not leave half a character out.
  StopMatcher m({"\xC3\xB6x"});  // "öx"
  std::string out = m.feed("caf\xC3");
  EXPECT_EQ(out, "caf");
  out += m.feed("\xA9 ok");
  out += m.flush();
  EXPECT_EQ(out, "caf\xC3\xA9 ok");
}

TEST(StopMatcher, NoStopsPassesEverythingThrough) {
  StopMatcher m({});
  EXPECT_EQ(m.feed("a"), "a");
  EXPECT_EQ(m.feed("\xE2\x82"), "\xE2\x82");  // partial characters are the detokenizer's job
  EXPECT_FALSE(m.matched());
}

}  // namespace
}  // namespace arc
