// Split models (NAME-0000i-of-0000N.gguf, as llama.cpp's gguf-split and the converter write them)
// open as one; a missing or foreign part is a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "arc/gguf.h"
#include "gguf_test_util.h"

namespace arc::gguf {
namespace {

using ::testing::HasSubstr;

struct SplitModel {
  std::filesystem::path dir;
  std::vector<std::string> paths;
  std::vector<std::vector<uint8_t>> data;  // per tensor, in order t0..t5
};

// Six tensors over three parts (two each); metadata in part 1 only, split keys in all.
SplitModel write_split(const std::string& tag, int wrong_no_part = -1) {
  SplitModel m;
  m.dir = testing::temp_dir(tag);
  for (int part = 0; part < 3; ++part) {
    Writer w;
    if (part == 0) {
      w.set("general.architecture", Value::str("qwen3moe"));
      w.set("qwen3moe.block_count", Value::u32(3));
    }
    w.set("split.no", Value::u16(static_cast<uint16_t>(part == wrong_no_part ? 0 : part)));
    w.set("split.count", Value::u16(3));
    w.set("split.tensors.count", Value::i32(6));
    for (int k = 0; k < 2; ++k) {
      const int idx = part * 2 + k;
      auto d = testing::pattern_bytes(8 * 4, static_cast<uint32_t>(idx));
      EXPECT_TRUE(w.add_tensor(fmt::format("t{}", idx), DType::F32, {8}, d).ok());
      m.data.push_back(d);
    }
    auto path = (m.dir / fmt::format("model-{:05d}-of-00003.gguf", part + 1)).string();
    EXPECT_TRUE(w.write(path).ok());
    m.paths.push_back(path);
  }
  return m;
}

TEST(GgufSplit, OpensAllPartsAsOne) {
  SplitModel m = write_split("split_ok");
  for (const auto& given : m.paths) {  // any part may be given
    auto r = File::open(given);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->n_files(), 3u);
    EXPECT_EQ(r->architecture(), "qwen3moe");
    EXPECT_EQ(r->get_int("qwen3moe.block_count"), 3);
    ASSERT_EQ(r->tensors().size(), 6u);
    uint64_t total = 0;
    for (const auto& p : m.paths) total += std::filesystem::file_size(p);
    EXPECT_EQ(r->file_bytes(), total);
    for (int i = 0; i < 6; ++i) {
      const TensorInfo* t = r->find_tensor(fmt::format("t{}", i));
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->file_index, static_cast<uint32_t>(i / 2));
      EXPECT_EQ(r->mapping(t->file_index)->path(), m.paths[i / 2]);
      auto got = r->tensor_data(*t);
      EXPECT_TRUE(std::equal(got.begin(), got.end(), m.data[i].begin(), m.data[i].end())) << i;
    }
  }
  std::filesystem::remove_all(m.dir);
}

TEST(GgufSplit, MissingPartIsNamed) {
  SplitModel m = write_split("split_missing");
  std::filesystem::remove(m.paths[2]);
  auto r = File::open(m.paths[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("split into 3 files but part 3"));
  EXPECT_THAT(r.status().message(), HasSubstr("model-00003-of-00003.gguf"));
  std::filesystem::remove_all(m.dir);
}

TEST(GgufSplit, InconsistentPartIsAnError) {
  SplitModel m = write_split("split_wrong", 1);
  auto r = File::open(m.paths[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(r.status().message(), HasSubstr("split.no 0"));
  EXPECT_THAT(r.status().message(), HasSubstr("part 2 of 3"));
  std::filesystem::remove_all(m.dir);
}

TEST(GgufSplit, PartWithoutSplitNameIsAnError) {
  SplitModel m = write_split("split_renamed");
  auto renamed = (m.dir / "model.gguf").string();
  std::filesystem::rename(m.paths[0], renamed);
  auto r = File::open(renamed);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("split into 3 files"));
  std::filesystem::remove_all(m.dir);
}

TEST(GgufSplit, WrongTensorTotalIsAnError) {
  SplitModel m = write_split("split_total");
  // Rewrite part 3 with one tensor fewer.
  Writer w;
  w.set("split.no", Value::u16(2));
  w.set("split.count", Value::u16(3));
  w.set("split.tensors.count", Value::i32(6));
  ASSERT_TRUE(w.add_tensor("t4", DType::F32, {8}, m.data[4]).ok());
  ASSERT_TRUE(w.write(m.paths[2]).ok());
  auto r = File::open(m.paths[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("split.tensors.count says 6 tensors"));
  std::filesystem::remove_all(m.dir);
}

TEST(GgufOpen, MissingFileIsNotFound) {
  auto r = File::open("/nonexistent/arc/model.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

// Issue 33: the split-name parser once used a recursive std::regex that overflowed the stack on
// a 30,000-character name sent to /engine/fit.
TEST(Split, VeryLongNamesAreParsedWithoutRecursion) {
  const std::string name = "/tmp/" + std::string(100000, 'a') + "-00001-of-00002.gguf";
  auto r = File::open(name);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().to_string();
  EXPECT_FALSE(File::open("/tmp/" + std::string(100000, '-') + ".gguf").ok());
}

}  // namespace
}  // namespace arc::gguf
