// Bad input: every truncation of a valid file and targeted corruptions each return an error with
// the right code and a message naming the byte offset (never a crash or an out-of-bounds read).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "arc/gguf.h"
#include "gguf_test_util.h"

namespace arc::gguf {
namespace {

using ::testing::HasSubstr;

// Where a tensor's info fields sit, found by searching for its length-prefixed name.
struct InfoPos {
  size_t n_dims = 0, dims = 0, type = 0, offset = 0;
};

InfoPos find_info(const std::vector<uint8_t>& bytes, const std::string& name, uint32_t n_dims) {
  std::vector<uint8_t> needle(8);
  uint64_t len = name.size();
  std::memcpy(needle.data(), &len, 8);
  needle.insert(needle.end(), name.begin(), name.end());
  auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  EXPECT_NE(it, bytes.end()) << name;
  InfoPos p;
  p.n_dims = static_cast<size_t>(it - bytes.begin()) + needle.size();
  p.dims = p.n_dims + 4;
  p.type = p.dims + 8 * n_dims;
  p.offset = p.type + 4;
  return p;
}

template <typename T>
void poke(std::vector<uint8_t>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(T));
}

template <typename T>
T peek(const std::vector<uint8_t>& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

// Parses and expects failure with `code` and "at byte <at>" in the message.
void expect_error(const std::vector<uint8_t>& bytes, StatusCode code, size_t at,
                  const std::string& words) {
  auto r = File::parse(bytes, "bad.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_THAT(r.status().message(), HasSubstr("bad.gguf: at byte " + std::to_string(at) + ":"));
  EXPECT_THAT(r.status().message(), HasSubstr(words));
}

TEST(GgufCorrupt, EveryTruncationIsAnError) {
  const auto good = testing::small_valid_file();
  auto parsed = File::parse(good);
  ASSERT_TRUE(parsed.ok());
  // Padding after the last tensor's data may be cut without harm; anything before it may not.
  size_t data_end = 0;
  for (const auto& t : parsed->tensors()) {
    data_end = std::max<size_t>(data_end, parsed->absolute_offset(t) + t.n_bytes);
  }
  ASSERT_GT(data_end, good.size() - 32);
  EXPECT_TRUE(File::parse(std::span(good.data(), data_end)).ok());
  for (size_t len = 0; len < data_end; ++len) {
    // An exact-size heap copy, so a read past `len` is caught by ASan.
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len));
    auto r = File::parse(cut);
    ASSERT_FALSE(r.ok()) << "truncated to " << len << " bytes";
    EXPECT_THAT(r.status().message(), HasSubstr("at byte ")) << len;
  }
}

TEST(GgufCorrupt, BadMagic) {
  auto b = testing::small_valid_file();
  b[0] = 'X';
  expect_error(b, StatusCode::kInvalidArgument, 0, "not a GGUF file");
}

TEST(GgufCorrupt, Version1And99) {
  auto b = testing::small_valid_file();
  poke<uint32_t>(b, 4, 1);
  expect_error(b, StatusCode::kUnimplemented, 4, "version 1 is not supported");
  poke<uint32_t>(b, 4, 99);
  expect_error(b, StatusCode::kUnimplemented, 4, "version 99 is not supported");
  poke<uint32_t>(b, 4, 2);  // v2 has the v3 layout
  EXPECT_TRUE(File::parse(b).ok());
  EXPECT_EQ(File::parse(b)->version(), 2u);
}

TEST(GgufCorrupt, HugeCounts) {
  auto b = testing::small_valid_file();
  poke<uint64_t>(b, 8, uint64_t{1} << 60);
  expect_error(b, StatusCode::kDataLoss, 8, "tensor count");
  b = testing::small_valid_file();
  poke<uint64_t>(b, 16, ~uint64_t{0});
  expect_error(b, StatusCode::kDataLoss, 16, "metadata count");
}

TEST(GgufCorrupt, HugeStringLength) {
  auto b = testing::small_valid_file();
  poke<uint64_t>(b, 24, uint64_t{1} << 40);  // length of the first key
  expect_error(b, StatusCode::kDataLoss, 24, "has length 1099511627776");
}

TEST(GgufCorrupt, HugeArrayCount) {
  auto b = testing::small_valid_file();
  // tokenizer.ggml.tokens: after its key come u32 type 9, u32 element type 8, u64 count 2.
  const std::string key = "tokenizer.ggml.tokens";
  auto it = std::search(b.begin(), b.end(), key.begin(), key.end());
  const size_t count_at = static_cast<size_t>(it - b.begin()) + key.size() + 8;
  ASSERT_EQ(peek<uint64_t>(b, count_at), 2u);
  poke<uint64_t>(b, count_at, uint64_t{1} << 58);
  expect_error(b, StatusCode::kDataLoss, count_at, "claims 288230376151711744 string elements");
}

TEST(GgufCorrupt, BadAlignment) {
  for (uint32_t a : {0u, 48u}) {
    Writer w;
    w.set("general.alignment", Value::u32(a));
    auto b = w.to_bytes();
    auto r = File::parse(b, "bad.gguf");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
    EXPECT_THAT(r.status().message(), HasSubstr("power of two"));
    // Named at the value: header 24 + key length 8 + "general.alignment" 17 + type 4.
    EXPECT_THAT(r.status().message(), HasSubstr("at byte 53:"));
  }
  Writer w;
  w.set("general.alignment", Value::str("32"));
  EXPECT_FALSE(File::parse(w.to_bytes()).ok());
}

TEST(GgufCorrupt, MisalignedOffset) {
  auto b = testing::small_valid_file();
  auto p = find_info(b, "blk.0.attn_q.weight", 2);
  poke<uint64_t>(b, p.offset, peek<uint64_t>(b, p.offset) + 4);
  expect_error(b, StatusCode::kDataLoss, p.offset, "not a multiple of the alignment 32");
}

TEST(GgufCorrupt, DataPastEnd) {
  auto b = testing::small_valid_file();
  auto p = find_info(b, "output_norm.weight", 1);
  poke<uint64_t>(b, p.offset, uint64_t{1} << 20);
  expect_error(b, StatusCode::kDataLoss, p.offset, "past the end of the file");
  poke<uint64_t>(b, p.offset, ~uint64_t{0} / 32 * 32);  // offset + size would wrap
  expect_error(b, StatusCode::kDataLoss, p.offset, "past the end of the file");
}

TEST(GgufCorrupt, OverlappingTensors) {
  auto b = testing::small_valid_file();
  auto first = find_info(b, "token_embd.weight", 2);
  auto second = find_info(b, "blk.0.attn_q.weight", 2);
  ASSERT_EQ(peek<uint64_t>(b, first.offset), 0u);
  poke<uint64_t>(b, second.offset, 0);
  expect_error(b, StatusCode::kDataLoss, second.offset, "overlaps tensor 'token_embd.weight'");
}

TEST(GgufCorrupt, UnknownTensorType) {
  auto b = testing::small_valid_file();
  auto p = find_info(b, "output_norm.weight", 1);
  poke<uint32_t>(b, p.type, 99);
  expect_error(b, StatusCode::kUnimplemented, p.type, "tensor type 99");
  // The engine's internal layouts (arc/kernels/repack.h) have ids too, but no file may use them.
  for (DType t : {DType::Q4_K_R16, DType::Q6_K_R16, DType::Q8_0_R16, DType::MXFP4_R16}) {
    auto c = testing::small_valid_file();
    auto q = find_info(c, "blk.0.attn_q.weight", 2);
    poke<uint32_t>(c, q.type, static_cast<uint32_t>(t));
    expect_error(c, StatusCode::kUnimplemented, q.type,
                 "tensor type " + std::to_string(static_cast<uint32_t>(t)));
  }
}

TEST(GgufCorrupt, DimensionOverflowAndZero) {
  auto b = testing::small_valid_file();
  auto p = find_info(b, "token_embd.weight", 2);
  poke<uint64_t>(b, p.dims, uint64_t{1} << 62);
  poke<uint64_t>(b, p.dims + 8, 4);
  expect_error(b, StatusCode::kDataLoss, p.dims + 8, "overflow");
  poke<uint64_t>(b, p.dims, ~uint64_t{0});
  expect_error(b, StatusCode::kDataLoss, p.dims, "dimension 0 is 18446744073709551615");
  poke<uint64_t>(b, p.dims, 0);
  expect_error(b, StatusCode::kDataLoss, p.dims, "dimension 0 is 0");
}

TEST(GgufCorrupt, DimensionCount0And5) {
  auto b = testing::small_valid_file();
  auto p = find_info(b, "output_norm.weight", 1);
  poke<uint32_t>(b, p.n_dims, 0);
  expect_error(b, StatusCode::kDataLoss, p.n_dims, "has 0 dimensions");
  poke<uint32_t>(b, p.n_dims, 5);
  expect_error(b, StatusCode::kDataLoss, p.n_dims, "has 5 dimensions");
}

TEST(GgufCorrupt, DuplicateKeyAndTensorName) {
  Writer w;
  w.set("a.x", Value::u8(1));
  w.set("a.y", Value::u8(2));
  auto b = w.to_bytes();
  // Rename the second key "a.y" to "a.x" (same length): second key starts at 24 + 8+3 + 4+1.
  const size_t second_key = 24 + 8 + 3 + 4 + 1;
  b[second_key + 8 + 2] = 'x';
  expect_error(b, StatusCode::kDataLoss, second_key, "'a.x' appears twice");

  Writer t;
  std::vector<uint8_t> four(4);
  ASSERT_TRUE(t.add_tensor("ta", DType::F32, {1}, four).ok());
  ASSERT_TRUE(t.add_tensor("tb", DType::F32, {1}, four).ok());
  b = t.to_bytes();
  auto p = find_info(b, "tb", 1);
  const size_t name_at = p.n_dims - 2 - 8;
  b[p.n_dims - 1] = 'a';
  expect_error(b, StatusCode::kDataLoss, name_at, "tensor 'ta' appears twice");
}

TEST(GgufCorrupt, BadValueTypesAndBool) {
  Writer w;
  w.set("k", Value::boolean(true));
  auto b = w.to_bytes();
  const size_t type_at = 24 + 8 + 1;
  b[type_at + 4] = 2;  // bool byte
  expect_error(b, StatusCode::kDataLoss, type_at + 4, "must be 0 or 1");
  poke<uint32_t>(b, type_at, 13);
  expect_error(b, StatusCode::kDataLoss, type_at, "unknown value type 13");
}

TEST(GgufCorrupt, ArraysNestedTooDeep) {
  // 20 levels of single-element nested arrays, built by hand.
  std::vector<uint8_t> b = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
  auto put64 = [&](uint64_t x) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(x >> (8 * i)));
  };
  auto put32 = [&](uint32_t x) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(x >> (8 * i)));
  };
  put64(0);
  put64(1);
  put64(1);
  b.push_back('k');
  put32(9);
  for (int i = 0; i < 20; ++i) {
    put32(9);
    put64(1);
  }
  put32(0);
  put64(0);
  b.resize(b.size() + 32, 0);
  auto r = File::parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("nests arrays more than"));
}

}  // namespace
}  // namespace arc::gguf
