#include "arc/mmap_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace arc {
namespace {

TEST(MappedFile, MapsContents) {
  auto path = std::filesystem::temp_directory_path() / "arc_mmap_test.bin";
  {
    std::ofstream f(path, std::ios::binary);
    f << "hello arclight";
  }
  auto m = MappedFile::open(path.string());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->size(), 14u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m->data()), m->size()), "hello arclight");
  MappedFile moved = std::move(*m);
  EXPECT_EQ(moved.size(), 14u);
  moved.advise_willneed(0, 100);  // clamps past the end
  std::filesystem::remove(path);
}

TEST(MappedFile, EmptyFileAndErrors) {
  auto path = std::filesystem::temp_directory_path() / "arc_mmap_empty.bin";
  { std::ofstream f(path, std::ios::binary); }
  auto m = MappedFile::open(path.string());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->size(), 0u);
  std::filesystem::remove(path);

  auto missing = MappedFile::open("/nonexistent/arc/model.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto dir = MappedFile::open(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace arc
