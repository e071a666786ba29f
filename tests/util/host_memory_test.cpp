// HostMemory (zeroed, aligned, movable) and read_file_rows against the file's bytes read with
// std::ifstream: whole ranges, small parts of many rows (the staging path), large parts of few
// rows (the direct path), progress, and the errors of missing and short files.
#include "arc/host_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace arc {
namespace {

TEST(HostMemory, ZeroedAlignedAndMovable) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4095}, (size_t{2} << 20) - 1, size_t{2} << 20,
                       (size_t{5} << 20) + 3}) {
    auto m = HostMemory::allocate(bytes);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    ASSERT_NE(m->data(), nullptr);
    EXPECT_EQ(m->size(), bytes);
    const auto addr = reinterpret_cast<uintptr_t>(m->data());
    EXPECT_EQ(addr % 64, 0u) << bytes;
    if (bytes >= (size_t{2} << 20)) {
      EXPECT_EQ(addr % (size_t{2} << 20), 0u) << bytes;
    }
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(m->data()[i], 0) << bytes << " at " << i;
    if (bytes > 0) {
      m->data()[bytes - 1] = 7;  // writable to the last byte
      HostMemory moved = std::move(*m);
      EXPECT_EQ(m->data(), nullptr);
      EXPECT_EQ(moved.data()[bytes - 1], 7);
      HostMemory assigned;
      assigned = std::move(moved);
      EXPECT_EQ(assigned.size(), bytes);
    }
  }
}

TEST(HugePageReport, ParsesTheKernelsFiles) {
  EXPECT_EQ(parse_thp_mode("always [madvise] never\n"), "madvise");
  EXPECT_EQ(parse_thp_mode("[always] madvise never\n"), "always");
  EXPECT_EQ(parse_thp_mode("always madvise [never]"), "never");
  EXPECT_EQ(parse_thp_mode(""), "");
  EXPECT_EQ(parse_thp_mode("always madvise never"), "");
  const std::string rollup =
      "56462664a000-7fff2f6d7000 ---p 00000000 00:00 0     [rollup]\n"
      "Rss:                1768 kB\n"
      "Anonymous:        980112 kB\n"
      "AnonHugePages:    976896 kB\n"
      "ShmemPmdMapped:        0 kB\n";
  EXPECT_EQ(parse_anon_huge_bytes(rollup), uint64_t{976896} * 1024);
  EXPECT_EQ(parse_anon_huge_bytes("Rss: 12 kB\n"), 0u);
  EXPECT_EQ(parse_anon_huge_bytes(""), 0u);
}

class ReadFileRows : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("arc_read_rows_" + std::to_string(getpid()) + ".bin"))
                .string();
    std::mt19937 rng(3);
    bytes_.resize(3 << 20);  // 3 MiB
    for (auto& b : bytes_) b = static_cast<uint8_t>(rng());
    std::ofstream f(path_, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes_.data()),
            static_cast<std::streamsize>(bytes_.size()));
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // What read_file_rows must produce, sliced from the bytes written.
  std::vector<uint8_t> expected(uint64_t offset, uint64_t n_rows, uint64_t stride,
                                uint64_t take_offset, uint64_t take_bytes) const {
    std::vector<uint8_t> out;
    for (uint64_t r = 0; r < n_rows; ++r) {
      const uint8_t* p = bytes_.data() + offset + r * stride + take_offset;
      out.insert(out.end(), p, p + take_bytes);
    }
    return out;
  }
  void check(uint64_t offset, uint64_t n_rows, uint64_t stride, uint64_t take_offset,
             uint64_t take_bytes) {
    std::vector<uint8_t> got(n_rows * take_bytes + 1, 0xA5);  // the byte after must stay
    uint64_t last = 0;
    int calls = 0;
    Status s = read_file_rows(path_, offset, n_rows, stride, take_offset, take_bytes, got.data(),
                              [&](uint64_t done) {
                                EXPECT_GT(done, last);
                                last = done;
                                ++calls;
                                return true;
                              });
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(got.back(), 0xA5) << "wrote past the end";
    got.pop_back();
    EXPECT_TRUE(got == expected(offset, n_rows, stride, take_offset, take_bytes))
        << "offset " << offset << " rows " << n_rows << " stride " << stride << " take ["
        << take_offset << ", +" << take_bytes << ")";
    EXPECT_EQ(last, n_rows * take_bytes);
    EXPECT_GE(calls, 1);
  }

  std::string path_;
  std::vector<uint8_t> bytes_;
};

TEST_F(ReadFileRows, WholeRangesAndParts) {
  check(0, 1, bytes_.size(), 0, bytes_.size());     // the whole file
  check(17, 1, 1000, 0, 1000);                      // an odd range
  check(32, 1000, 144, 0, 144);                     // whole rows: one range
  check(32, 5000, 144, 72, 72);                     // column halves (staging path)
  check(5, 4099, 210, 0, 70);                       // first third of odd rows
  check(64, 2, 1 << 20, 1 << 19, 1 << 19);          // large parts (direct path)
  check(3, 3, (1 << 20) - 7, 11, (1 << 20) - 100);  // large, odd, unaligned
}

TEST_F(ReadFileRows, ClearErrors) {
  std::vector<uint8_t> dst(1 << 20);
  Status missing = read_file_rows(path_ + ".absent", 0, 1, 16, 0, 16, dst.data());
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(".absent"), std::string::npos) << missing.message();

  // A range past the end (a truncated download) says where the file ends.
  Status shortr = read_file_rows(path_, bytes_.size() - 100, 1, 200, 0, 200, dst.data());
  EXPECT_EQ(shortr.code(), StatusCode::kDataLoss);
  EXPECT_NE(shortr.message().find("truncated"), std::string::npos) << shortr.message();
  Status short_rows = read_file_rows(path_, 0, 100, 64 << 10, 0, 100, dst.data());
  EXPECT_EQ(short_rows.code(), StatusCode::kDataLoss) << short_rows.to_string();

  Status outside = read_file_rows(path_, 0, 2, 100, 60, 50, dst.data());
  EXPECT_EQ(outside.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(read_file_rows(path_, 0, 0, 100, 0, 10, dst.data()).ok());  // nothing to keep
  EXPECT_TRUE(read_file_rows(path_, 0, 5, 0, 0, 0, dst.data()).ok());
}

}  // namespace
}  // namespace arc
