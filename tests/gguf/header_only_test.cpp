// File::parse_header: a file's first bytes and its size (a remote file's first range) give the
// same metadata and tensor table as the whole file, or kOutOfRange ("read more") while the header
// is cut; never a wrong answer, a crash or an allocation the prefix cannot back. The oracle is
// File::parse on the whole file, over the fuzzer's seed corpus and every prefix length.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "arc/gguf.h"

namespace arc::gguf {
namespace {

std::vector<uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(GgufHeaderOnly, EveryPrefixIsTheWholeAnswerOrAskForMore) {
  const std::filesystem::path dir = std::filesystem::path(ARC_TEST_DATA_DIR) / "gguf_corpus";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::vector<uint8_t> bytes = read_all(entry.path());
    auto whole = File::parse(bytes, name);
    bool reached_ok = false;
    for (size_t n = 0; n <= bytes.size(); ++n) {
      // An exact-size heap copy of the prefix, so over-reads show under ASan.
      const std::vector<uint8_t> head(bytes.begin(), bytes.begin() + n);
      auto h = File::parse_header(head, bytes.size(), name);
      if (!h.ok()) {
        if (h.status().code() == StatusCode::kOutOfRange) {
          ASSERT_LT(n, bytes.size()) << name;  // the whole file never asks for more
          continue;
        }
        // A definite error: the whole file fails the same way.
        ASSERT_FALSE(whole.ok()) << name << " prefix " << n << ": " << h.status().to_string();
        EXPECT_EQ(h.status().code(), whole.status().code()) << name << " prefix " << n;
        break;
      }
      ASSERT_TRUE(whole.ok()) << name << " prefix " << n;
      reached_ok = true;
      EXPECT_EQ(h->metadata().size(), whole->metadata().size()) << name;
      ASSERT_EQ(h->tensors().size(), whole->tensors().size()) << name;
      for (size_t i = 0; i < h->tensors().size(); ++i) {
        EXPECT_EQ(h->tensors()[i].name, whole->tensors()[i].name);
        EXPECT_EQ(h->tensors()[i].n_bytes, whole->tensors()[i].n_bytes);
        EXPECT_EQ(h->tensors()[i].offset, whole->tensors()[i].offset);
        EXPECT_TRUE(h->tensor_data(h->tensors()[i]).empty());  // header-only: no data
      }
      EXPECT_EQ(h->file_bytes(), bytes.size());
      break;  // longer prefixes parse the same header
    }
    if (whole.ok()) EXPECT_TRUE(reached_ok) << name;
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(GgufHeaderOnly, MoreBytesThanTheFileIsAnError) {
  const std::vector<uint8_t> head(64, 0);
  auto r = File::parse_header(head, 10, "x.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace arc::gguf
