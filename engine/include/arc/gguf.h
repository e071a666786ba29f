// GGUF (v2, v3) model files: a validating reader over mmap and a writer for tests and tools.
//
// Layout (little-endian): magic "GGUF", u32 version, u64 tensor count, u64 metadata count,
// metadata key/values, tensor infos (name, n_dims, dims[ne0 fastest], type, offset), padding to
// `general.alignment` (default 32), then tensor data. Every count, length and offset is checked
// against the file before use; errors name the problem and the byte offset.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "arc/kernels/dtype.h"
#include "arc/mmap_file.h"
#include "arc/status.h"

namespace arc::gguf {

// Metadata value types as stored in the file. Serialized: never renumber.
enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

std::string_view value_type_name(ValueType t);

struct Array;

// One metadata value. Scalars keep their stored type so the writer round-trips them exactly.
struct Value {
  ValueType type = ValueType::kUint32;
  std::variant<uint64_t, int64_t, double, bool, std::string, std::shared_ptr<Array>> v;

  static Value u8(uint8_t x) { return {ValueType::kUint8, uint64_t{x}}; }
  static Value i8(int8_t x) { return {ValueType::kInt8, int64_t{x}}; }
  static Value u16(uint16_t x) { return {ValueType::kUint16, uint64_t{x}}; }
  static Value i16(int16_t x) { return {ValueType::kInt16, int64_t{x}}; }
  static Value u32(uint32_t x) { return {ValueType::kUint32, uint64_t{x}}; }
  static Value i32(int32_t x) { return {ValueType::kInt32, int64_t{x}}; }
  static Value u64(uint64_t x) { return {ValueType::kUint64, x}; }
  static Value i64(int64_t x) { return {ValueType::kInt64, x}; }
  static Value f32(float x) { return {ValueType::kFloat32, double{x}}; }
  static Value f64(double x) { return {ValueType::kFloat64, x}; }
  static Value boolean(bool x) { return {ValueType::kBool, x}; }
  static Value str(std::string x) { return {ValueType::kString, std::move(x)}; }
  static Value array(Array a);

  // Conversions that succeed for any integer / float / matching type; nullopt otherwise
  // (including integers that do not fit).
  std::optional<int64_t> as_int() const;
  std::optional<uint64_t> as_uint() const;
  std::optional<double> as_float() const;  // floats and integers
  std::optional<bool> as_bool() const;
  const std::string* as_string() const;
  const Array* as_array() const;
};

// An array of one element type (nested arrays allowed: element type kArray).
struct Array {
  ValueType elem_type = ValueType::kUint32;
  std::vector<Value> items;
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;  // GGUF order: shape[0] is the fastest-varying (row length)
  DType type = DType::F32;
  uint64_t offset = 0;      // from the start of its file's data section
  uint64_t n_bytes = 0;     // derived from shape and type
  uint32_t file_index = 0;  // which split file holds it (0 for single files)

  int64_t n_elements() const;
  int64_t n_rows() const;  // product of shape[1..]
};

class File {
 public:
  // Opens and validates a GGUF file. A name like NAME-00001-of-00003.gguf opens all the splits
  // as one model (any of them may be given). Unknown architectures are fine; unknown tensor types
  // are errors (their sizes are unknowable).
  static Result<File> open(const std::string& path);
  // Validates bytes in memory (the fuzzer's entry point); the caller keeps `bytes` alive.
  static Result<File> parse(std::span<const uint8_t> bytes, std::string display_name = "<memory>");
  // Validates a file from its first bytes only (a remote file's first range): metadata and tensor
  // infos come from `head`, and every tensor must lie inside `file_size`. The result holds no
  // tensor data (tensor_data() is empty) and does not refer to `head`. kOutOfRange: the header
  // goes on past `head`; call again with a longer prefix.
  static Result<File> parse_header(std::span<const uint8_t> head, uint64_t file_size,
                                   std::string display_name);
  // Joins the parsed parts of a split model, in order, into one: metadata from the first part,
  // tensors from all. Checks split.no / split.count against the order and split.tensors.count.
  static Result<File> join_splits(std::vector<File> parts, std::string path);

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  const std::string& path() const { return path_; }
  size_t n_files() const { return part_sizes_.size(); }
  uint64_t file_bytes() const;  // total over splits

  const std::map<std::string, Value, std::less<>>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  // Array accessors; nullopt when absent or of another element type.
  std::optional<std::vector<std::string>> get_string_array(std::string_view key) const;
  std::optional<std::vector<int64_t>> get_int_array(std::string_view key) const;
  std::optional<std::vector<double>> get_float_array(std::string_view key) const;

  // "general.architecture", or "" when absent.
  std::string architecture() const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  // The tensor's bytes inside the mapping (validated to lie in the file).
  std::span<const uint8_t> tensor_data(const TensorInfo& t) const;
  // The mapping that holds a tensor (for madvise / streaming loads).
  const MappedFile* mapping(uint32_t file_index) const;
  // Absolute byte offset of a tensor's data within its split file.
  uint64_t absolute_offset(const TensorInfo& t) const;

 private:
  File() = default;
  friend class Parser;

  std::string path_;
  uint32_t version_ = 3;
  uint32_t alignment_ = 32;
  std::vector<MappedFile> maps_;                 // one per split (empty for parse())
  std::vector<std::span<const uint8_t>> bytes_;  // per split: the whole file (none: header-only)
  std::vector<uint64_t> part_sizes_;             // per split: its size in bytes
  std::vector<uint64_t> data_offsets_;           // per split: start of the data section
  std::map<std::string, Value, std::less<>> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

// A split model's part name: NAME-00002-of-00005.gguf -> {NAME, 2, 5}. Works on paths and URLs
// (without a query string); nullopt for names that are not split parts.
struct SplitName {
  std::string prefix;  // the name without "-00002-of-00005.gguf"
  uint32_t no = 0;     // 1-based
  uint32_t count = 0;
};
std::optional<SplitName> parse_split_name(std::string_view name);
// The name of part `no` (1-based) of the same model.
std::string split_part_name(const SplitName& s, uint32_t no);

// Builds a GGUF v3 file. Metadata keeps insertion order; tensors are laid out in the order added,
// each aligned to `general.alignment`.
class Writer {
 public:
  void set(std::string key, Value value);  // replaces an existing key
  void erase(
      std::string_view key);  // drops a key if present (files as older converters wrote them)
  void set_alignment(uint32_t alignment);  // also written as general.alignment
  // data must hold exactly the bytes of `shape` in `type`.
  Status add_tensor(std::string name, DType type, std::vector<int64_t> shape,
                    std::span<const uint8_t> data);
  Status write(const std::string& path) const;
  std::vector<uint8_t> to_bytes() const;

 private:
  struct PendingTensor {
    std::string name;
    DType type;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<PendingTensor> tensors_;
  uint32_t alignment_ = 32;
};

}  // namespace arc::gguf
