// Read-only memory map of a (possibly very large) file. Moving transfers the mapping; the
// destructor unmaps. Pages are brought in on first touch, so a rank that reads only its shard
// only pays for its shard.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "arc/status.h"

namespace arc {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  static Result<MappedFile> open(const std::string& path);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

  // Hints that [offset, offset+len) will be read soon / not again (page-cache friendly loading).
  void advise_willneed(size_t offset, size_t len) const;
  void advise_dontneed(size_t offset, size_t len) const;

 private:
  void reset();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace arc
