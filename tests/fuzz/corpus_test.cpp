// Regression run of the fuzzer's seed corpus (tests/data/gguf_corpus) in the default build. Files
// named valid_* must parse; bad_* must be rejected with a message naming a byte offset; crash_*
// (inputs the fuzzer once crashed on) must simply be handled, and when they parse, summarized.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "arc/gguf.h"
#include "arc/gguf_summary.h"

namespace arc::gguf {
namespace {

std::vector<uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(GgufCorpus, EverySeedParsesOrFailsCleanly) {
  const std::filesystem::path dir = std::filesystem::path(ARC_TEST_DATA_DIR) / "gguf_corpus";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int n_valid = 0, n_bad = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    // An exact-size heap copy, so over-reads show under ASan.
    const std::vector<uint8_t> bytes = read_all(entry.path());
    auto r = File::parse(bytes, name);
    if (name.rfind("crash_", 0) == 0) {
      if (r.ok()) (void)to_json(summarize(*r)).dump();
      continue;
    }
    if (name.rfind("valid_", 0) == 0) {
      ++n_valid;
      ASSERT_TRUE(r.ok()) << name << ": " << r.status().to_string();
      (void)to_json(summarize(*r)).dump();
    } else {
      ++n_bad;
      ASSERT_FALSE(r.ok()) << name << " should be rejected";
      EXPECT_THAT(r.status().message(), ::testing::HasSubstr("at byte ")) << name;
    }
  }
  EXPECT_GE(n_valid, 3);
  EXPECT_GE(n_bad, 5);
}

}  // namespace
}  // namespace arc::gguf
