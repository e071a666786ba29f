// The validating GGUF parser behind File::parse and File::open.
//
// Every count, length and offset is checked against the bytes that remain before it is used, so a
// hostile file can neither make the parser read out of bounds nor allocate more than its own size
// could describe. Errors name the problem, the byte offset and what to do about it.
//
// Status codes: kInvalidArgument for "not a GGUF file" (bad magic), kUnimplemented for versions and
// tensor types this build does not know, kDataLoss for everything truncated or inconsistent.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "arc/gguf.h"

namespace arc::gguf {

static_assert(std::endian::native == std::endian::little, "GGUF is read as little-endian");

namespace {

constexpr uint32_t kMaxDims = 4;            // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;           // real files nest at most 2 deep; bounds the recursion
constexpr uint32_t kDefaultAlignment = 32;  // GGUF_DEFAULT_ALIGNMENT
constexpr uint32_t kLastValueType = static_cast<uint32_t>(ValueType::kFloat64);

// Smallest number of bytes one element of a type can take; bounds array counts.
uint64_t min_value_bytes(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
    case ValueType::kString:
      return 8;  // a string is at least its u64 length
    case ValueType::kArray:
      return 12;  // u32 element type + u64 count
  }
  return 1;
}

// Reads little-endian values from a byte span, never past its end.
//
// A header-only cursor (File::parse_header) holds the file's first bytes but knows the whole
// file's size: counts and lengths are bounded by the file, and a read past the bytes held (but
// inside the file) is kOutOfRange, which tells the caller to fetch a longer prefix.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, const std::string& name, uint64_t file_size)
      : bytes_(bytes), name_(name), file_size_(file_size) {}

  uint64_t pos() const { return pos_; }
  uint64_t size() const { return file_size_; }
  uint64_t remaining() const { return file_size_ - pos_; }
  // Bytes held after pos (== remaining() unless header-only); bounds reservations.
  uint64_t available() const { return pos_ < bytes_.size() ? bytes_.size() - pos_ : 0; }

  Status fail(StatusCode code, uint64_t at, const std::string& what) const {
    return {code, fmt::format("{}: at byte {}: {}", name_, at, what)};
  }

  Status need(uint64_t n, std::string_view what) const {
    if (n <= available()) return ok_status();
    if (n <= remaining()) {
      return fail(StatusCode::kOutOfRange, pos_,
                  fmt::format("{} lies past the first {} bytes read; the header is longer, read "
                              "more of the file",
                              what, bytes_.size()));
    }
    return fail(StatusCode::kDataLoss, pos_,
                fmt::format("{} needs {} bytes but the file ends after {} more (size {}); the file "
                            "is truncated or corrupt, download it again",
                            what, n, remaining(), size()));
  }

  template <typename T>
  Status read(T& out, std::string_view what) {
    ARC_RETURN_IF_ERROR(need(sizeof(T), what));
    std::memcpy(&out, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return ok_status();
  }

  Status read_string(std::string& out, std::string_view what) {
    const uint64_t at = pos_;
    uint64_t len = 0;
    ARC_RETURN_IF_ERROR(read(len, what));
    if (len > remaining()) {
      return fail(StatusCode::kDataLoss, at,
                  fmt::format("{} has length {} but only {} bytes remain in the file; the file is "
                              "truncated or corrupt",
                              what, len, remaining()));
    }
    ARC_RETURN_IF_ERROR(need(len, what));
    out.assign(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
    pos_ += len;
    return ok_status();
  }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& name_;
  uint64_t file_size_ = 0;  // >= bytes_.size()
  uint64_t pos_ = 0;
};

bool known_value_type(uint32_t t) {
  return t <= kLastValueType;
}

Status read_value(Cursor& c, ValueType type, int depth, const std::string& key, Value& out);

Status read_array(Cursor& c, int depth, const std::string& key, Value& out) {
  const uint64_t at = c.pos();
  uint32_t elem_raw = 0;
  ARC_RETURN_IF_ERROR(c.read(elem_raw, fmt::format("element type of array '{}'", key)));
  if (!known_value_type(elem_raw)) {
    return c.fail(StatusCode::kDataLoss, at,
                  fmt::format("array '{}' has unknown element type {} (known: 0..{})", key,
                              elem_raw, kLastValueType));
  }
  const auto elem = static_cast<ValueType>(elem_raw);
  if (elem == ValueType::kArray && depth + 1 >= kMaxArrayDepth) {
    return c.fail(StatusCode::kDataLoss, at,
                  fmt::format("array '{}' nests arrays more than {} deep", key, kMaxArrayDepth));
  }
  const uint64_t count_at = c.pos();
  uint64_t count = 0;
  ARC_RETURN_IF_ERROR(c.read(count, fmt::format("element count of array '{}'", key)));
  // Each element takes at least min_value_bytes, so a count beyond remaining/min is a lie.
  if (count > c.remaining() / min_value_bytes(elem)) {
    return c.fail(StatusCode::kDataLoss, count_at,
                  fmt::format("array '{}' claims {} {} elements but only {} bytes remain; the "
                              "file is truncated or corrupt",
                              key, count, value_type_name(elem), c.remaining()));
  }
  Array arr;
  arr.elem_type = elem;
  arr.items.reserve(std::min(count, c.available() / min_value_bytes(elem)));
  for (uint64_t i = 0; i < count; ++i) {
    Value item;
    ARC_RETURN_IF_ERROR(read_value(c, elem, depth + 1, key, item));
    arr.items.push_back(std::move(item));
  }
  out = Value::array(std::move(arr));
  return ok_status();
}

template <typename T, typename Stored>
Status read_scalar(Cursor& c, ValueType type, const std::string& key, Value& out) {
  T x{};
  ARC_RETURN_IF_ERROR(c.read(x, fmt::format("value of '{}'", key)));
  out.type = type;
  out.v = static_cast<Stored>(x);
  return ok_status();
}

Status read_value(Cursor& c, ValueType type, int depth, const std::string& key, Value& out) {
  switch (type) {
    case ValueType::kUint8:
      return read_scalar<uint8_t, uint64_t>(c, type, key, out);
    case ValueType::kInt8:
      return read_scalar<int8_t, int64_t>(c, type, key, out);
    case ValueType::kUint16:
      return read_scalar<uint16_t, uint64_t>(c, type, key, out);
    case ValueType::kInt16:
      return read_scalar<int16_t, int64_t>(c, type, key, out);
    case ValueType::kUint32:
      return read_scalar<uint32_t, uint64_t>(c, type, key, out);
    case ValueType::kInt32:
      return read_scalar<int32_t, int64_t>(c, type, key, out);
    case ValueType::kUint64:
      return read_scalar<uint64_t, uint64_t>(c, type, key, out);
    case ValueType::kInt64:
      return read_scalar<int64_t, int64_t>(c, type, key, out);
    case ValueType::kFloat32:
      return read_scalar<float, double>(c, type, key, out);
    case ValueType::kFloat64:
      return read_scalar<double, double>(c, type, key, out);
    case ValueType::kBool: {
      const uint64_t at = c.pos();
      uint8_t b = 0;
      ARC_RETURN_IF_ERROR(c.read(b, fmt::format("value of '{}'", key)));
      if (b > 1) {
        return c.fail(StatusCode::kDataLoss, at,
                      fmt::format("bool '{}' holds {} (must be 0 or 1)", key, b));
      }
      out = Value::boolean(b != 0);
      return ok_status();
    }
    case ValueType::kString: {
      std::string s;
      ARC_RETURN_IF_ERROR(c.read_string(s, fmt::format("string value of '{}'", key)));
      out = Value::str(std::move(s));
      return ok_status();
    }
    case ValueType::kArray:
      return read_array(c, depth, key, out);
  }
  return c.fail(StatusCode::kInternal, c.pos(), "unhandled value type");
}

// a * b, or nullopt when it overflows int64.
std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace

// Parses one GGUF file image (one split). Friend of File.
class Parser {
 public:
  // file_size > bytes.size(): header-only (bytes is the file's first part; no tensor data).
  static Result<File> parse(std::span<const uint8_t> bytes, std::string name, uint64_t file_size) {
    File f;
    f.path_ = std::move(name);
    if (file_size == bytes.size()) f.bytes_.push_back(bytes);
    f.part_sizes_.push_back(file_size);
    Cursor c(bytes, f.path_, file_size);
    ARC_RETURN_IF_ERROR(parse_header(c, f));
    uint64_t n_tensors = 0, n_kv = 0;
    ARC_RETURN_IF_ERROR(parse_counts(c, n_tensors, n_kv));
    uint64_t alignment_at = 0;  // where general.alignment's value sits, for messages
    ARC_RETURN_IF_ERROR(parse_metadata(c, f, n_kv, alignment_at));
    ARC_RETURN_IF_ERROR(parse_alignment(c, f, alignment_at));
    std::vector<uint64_t> info_at;  // byte offset of each tensor's offset field
    ARC_RETURN_IF_ERROR(parse_tensor_infos(c, f, n_tensors, info_at));
    ARC_RETURN_IF_ERROR(check_data(c, f, info_at));
    return f;
  }

 private:
  static Status parse_header(Cursor& c, File& f) {
    if (c.size() < 4) {
      return c.fail(StatusCode::kDataLoss, 0,
                    fmt::format("the file has only {} bytes; a GGUF file starts with the 4-byte "
                                "magic 'GGUF'",
                                c.size()));
    }
    uint32_t magic = 0;
    ARC_RETURN_IF_ERROR(c.read(magic, "magic"));
    if (magic != 0x46554747u) {  // "GGUF" little-endian
      return c.fail(StatusCode::kInvalidArgument, 0,
                    fmt::format("not a GGUF file: the magic is {:08x}, expected 'GGUF' "
                                "(47475546); is this a safetensors or ggml file?",
                                __builtin_bswap32(magic)));
    }
    ARC_RETURN_IF_ERROR(c.read(f.version_, "version"));
    if (f.version_ == 1) {
      return c.fail(StatusCode::kUnimplemented, 4,
                    "GGUF version 1 is not supported (its sizes are 32-bit); convert the model "
                    "again with a current llama.cpp to get version 3");
    }
    if (f.version_ != 2 && f.version_ != 3) {
      std::string hint = __builtin_bswap32(f.version_) <= 3 ? " (a big-endian GGUF file?)" : "";
      return c.fail(StatusCode::kUnimplemented, 4,
                    fmt::format("GGUF version {} is not supported; this build reads versions 2 "
                                "and 3{}",
                                f.version_, hint));
    }
    return ok_status();
  }

  static Status parse_counts(Cursor& c, uint64_t& n_tensors, uint64_t& n_kv) {
    ARC_RETURN_IF_ERROR(c.read(n_tensors, "tensor count"));
    ARC_RETURN_IF_ERROR(c.read(n_kv, "metadata count"));
    // A tensor info is at least 8 (name length) + 4 + 8 (one dim) + 4 + 8 bytes; a key/value at
    // least 8 (key length) + 4 (type) + 1 (value).
    constexpr uint64_t kMinTensorInfo = 32, kMinKv = 13;
    if (n_tensors > c.remaining() / kMinTensorInfo) {
      return c.fail(StatusCode::kDataLoss, 8,
                    fmt::format("tensor count {} cannot fit in the {} bytes that remain; the file "
                                "is truncated or corrupt",
                                n_tensors, c.remaining()));
    }
    if (n_kv > c.remaining() / kMinKv) {
      return c.fail(StatusCode::kDataLoss, 16,
                    fmt::format("metadata count {} cannot fit in the {} bytes that remain; the "
                                "file is truncated or corrupt",
                                n_kv, c.remaining()));
    }
    return ok_status();
  }

  static Status parse_metadata(Cursor& c, File& f, uint64_t n_kv, uint64_t& alignment_at) {
    for (uint64_t i = 0; i < n_kv; ++i) {
      const uint64_t at = c.pos();
      std::string key;
      ARC_RETURN_IF_ERROR(c.read_string(key, fmt::format("key of metadata entry {}", i)));
      if (f.metadata_.count(key) != 0) {
        return c.fail(StatusCode::kDataLoss, at,
                      fmt::format("metadata key '{}' appears twice; the file is corrupt", key));
      }
      const uint64_t type_at = c.pos();
      uint32_t type_raw = 0;
      ARC_RETURN_IF_ERROR(c.read(type_raw, fmt::format("value type of '{}'", key)));
      if (!known_value_type(type_raw)) {
        return c.fail(StatusCode::kDataLoss, type_at,
                      fmt::format("metadata '{}' has unknown value type {} (known: 0..{})", key,
                                  type_raw, kLastValueType));
      }
      if (key == "general.alignment") alignment_at = c.pos();
      Value v;
      ARC_RETURN_IF_ERROR(read_value(c, static_cast<ValueType>(type_raw), 0, key, v));
      f.metadata_.emplace(std::move(key), std::move(v));
    }
    return ok_status();
  }

  static Status parse_alignment(Cursor& c, File& f, uint64_t alignment_at) {
    f.alignment_ = kDefaultAlignment;
    const Value* a = f.find("general.alignment");
    if (a == nullptr) return ok_status();
    std::optional<uint64_t> v = a->as_uint();
    if (!v || *v == 0 || !std::has_single_bit(*v) || *v > (uint64_t{1} << 30)) {
      return c.fail(StatusCode::kDataLoss, alignment_at,
                    fmt::format("general.alignment must be a power of two between 1 and 2^30, "
                                "found {}; the file is corrupt",
                                v ? std::to_string(*v) : std::string(value_type_name(a->type))));
    }
    f.alignment_ = static_cast<uint32_t>(*v);
    return ok_status();
  }

  static Status parse_tensor_infos(Cursor& c, File& f, uint64_t n_tensors,
                                   std::vector<uint64_t>& info_at) {
    f.tensors_.reserve(std::min<uint64_t>(n_tensors, c.available() / 32));
    for (uint64_t i = 0; i < n_tensors; ++i) {
      const uint64_t at = c.pos();
      TensorInfo t;
      ARC_RETURN_IF_ERROR(c.read_string(t.name, fmt::format("name of tensor {}", i)));
      if (f.tensor_index_.count(t.name) != 0) {
        return c.fail(StatusCode::kDataLoss, at,
                      fmt::format("tensor '{}' appears twice; the file is corrupt", t.name));
      }
      const uint64_t dims_at = c.pos();
      uint32_t n_dims = 0;
      ARC_RETURN_IF_ERROR(c.read(n_dims, fmt::format("dimension count of '{}'", t.name)));
      if (n_dims < 1 || n_dims > kMaxDims) {
        return c.fail(
            StatusCode::kDataLoss, dims_at,
            fmt::format("tensor '{}' has {} dimensions (must be 1..{})", t.name, n_dims, kMaxDims));
      }
      int64_t n_elems = 1;
      for (uint32_t d = 0; d < n_dims; ++d) {
        const uint64_t dim_at = c.pos();
        uint64_t dim = 0;
        ARC_RETURN_IF_ERROR(c.read(dim, fmt::format("dimension {} of '{}'", d, t.name)));
        if (dim == 0 || dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return c.fail(
              StatusCode::kDataLoss, dim_at,
              fmt::format("tensor '{}' dimension {} is {} (must be 1..2^63-1)", t.name, d, dim));
        }
        std::optional<int64_t> prod = checked_mul(n_elems, static_cast<int64_t>(dim));
        if (!prod) {
          return c.fail(StatusCode::kDataLoss, dim_at,
                        fmt::format("tensor '{}' has more than 2^63 elements (dimensions "
                                    "overflow); the file is corrupt",
                                    t.name));
        }
        n_elems = *prod;
        t.shape.push_back(static_cast<int64_t>(dim));
      }
      const uint64_t type_at = c.pos();
      uint32_t type_raw = 0;
      ARC_RETURN_IF_ERROR(c.read(type_raw, fmt::format("type of '{}'", t.name)));
      const DTypeInfo* info = dtype_info(type_raw);
      if (info == nullptr || dtype_is_internal(info->type)) {
        return c.fail(StatusCode::kUnimplemented, type_at,
                      fmt::format("tensor '{}' has tensor type {}, which this build does not "
                                  "know; update Arclight or convert the model to a known type",
                                  t.name, type_raw));
      }
      t.type = info->type;
      std::optional<uint64_t> row = dtype_row_bytes(t.type, static_cast<uint64_t>(t.shape[0]));
      if (!row) {
        return c.fail(StatusCode::kDataLoss, dims_at,
                      fmt::format("tensor '{}' rows of {} elements are not a multiple of the {} "
                                  "block size {}",
                                  t.name, t.shape[0], info->name, info->block_elems));
      }
      const uint64_t rows = static_cast<uint64_t>(n_elems / t.shape[0]);
      if (*row != 0 && rows > std::numeric_limits<uint64_t>::max() / *row) {
        return c.fail(StatusCode::kDataLoss, dims_at,
                      fmt::format("tensor '{}' size overflows 64 bits", t.name));
      }
      t.n_bytes = *row * rows;
      const uint64_t offset_at = c.pos();
      ARC_RETURN_IF_ERROR(c.read(t.offset, fmt::format("data offset of '{}'", t.name)));
      f.tensor_index_.emplace(t.name, f.tensors_.size());
      f.tensors_.push_back(std::move(t));
      info_at.push_back(offset_at);
    }
    return ok_status();
  }

  static Status check_data(Cursor& c, File& f, const std::vector<uint64_t>& info_at) {
    const uint64_t size = c.size();
    const uint64_t data = (c.pos() + f.alignment_ - 1) / f.alignment_ * f.alignment_;
    if (data > size) {
      return c.fail(StatusCode::kDataLoss, c.pos(),
                    fmt::format("the data section starts at byte {} (after padding to {}) but "
                                "the file has {} bytes; the file is truncated",
                                data, f.alignment_, size));
    }
    f.data_offsets_.push_back(data);
    // Check every tensor's placement, then look for overlaps in offset order.
    std::vector<size_t> order(f.tensors_.size());
    for (size_t i = 0; i < order.size(); ++i) {
      const TensorInfo& t = f.tensors_[i];
      const uint64_t at = info_at[i];
      if (t.offset % f.alignment_ != 0) {
        return c.fail(StatusCode::kDataLoss, at,
                      fmt::format("tensor '{}' data offset {} is not a multiple of the alignment "
                                  "{}; the file is corrupt",
                                  t.name, t.offset, f.alignment_));
      }
      const uint64_t room = size - data;
      if (t.offset > room || t.n_bytes > room - t.offset) {
        return c.fail(StatusCode::kDataLoss, at,
                      fmt::format("tensor '{}' ({} bytes at data offset {}, file byte {}) ends "
                                  "past the end of the file ({} bytes); the file is truncated, "
                                  "download it again",
                                  t.name, t.n_bytes, t.offset, data + t.offset, size));
      }
      order[i] = i;
    }
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return f.tensors_[a].offset < f.tensors_[b].offset; });
    for (size_t k = 1; k < order.size(); ++k) {
      const TensorInfo& prev = f.tensors_[order[k - 1]];
      const TensorInfo& cur = f.tensors_[order[k]];
      if (prev.offset + prev.n_bytes > cur.offset) {
        return c.fail(StatusCode::kDataLoss, info_at[order[k]],
                      fmt::format("tensor '{}' (data offset {}) overlaps tensor '{}' (data "
                                  "offset {}, {} bytes); the file is corrupt",
                                  cur.name, cur.offset, prev.name, prev.offset, prev.n_bytes));
      }
    }
    return ok_status();
  }
};

Result<File> File::parse(std::span<const uint8_t> bytes, std::string display_name) {
  return Parser::parse(bytes, std::move(display_name), bytes.size());
}

Result<File> File::parse_header(std::span<const uint8_t> head, uint64_t file_size,
                                std::string display_name) {
  if (head.size() > file_size) {
    return invalid_argument(fmt::format("{}: {} header bytes given for a file of {} bytes",
                                        display_name, head.size(), file_size));
  }
  return Parser::parse(head, std::move(display_name), file_size);
}

}  // namespace arc::gguf
