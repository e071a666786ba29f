// Writer: builds GGUF v3 files (tests, tools, converters).
#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <set>

#include "arc/gguf.h"

namespace arc::gguf {

namespace {

constexpr std::string_view kAlignmentKey = "general.alignment";

class ByteSink {
 public:
  explicit ByteSink(std::vector<uint8_t>& out) : out_(out) {}

  template <typename T>
  void put(T x) {
    const size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &x, sizeof(T));
  }
  void put_string(std::string_view s) {
    put<uint64_t>(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void pad_to(uint64_t alignment) {
    while (out_.size() % alignment != 0) out_.push_back(0);
  }
  size_t size() const { return out_.size(); }

 private:
  std::vector<uint8_t>& out_;
};

// Writes the payload of `v` as type `t` (no type tag). Values whose stored variant does not match
// `t` are converted (a Value built by hand with a mismatched type writes as zero / empty).
void put_value(ByteSink& s, ValueType t, const Value& v) {
  const uint64_t u = v.as_uint().value_or(static_cast<uint64_t>(v.as_int().value_or(0)));
  const int64_t i = v.as_int().value_or(static_cast<int64_t>(u));
  const double d = v.as_float().value_or(0.0);
  switch (t) {
    case ValueType::kUint8:
      s.put(static_cast<uint8_t>(u));
      break;
    case ValueType::kInt8:
      s.put(static_cast<int8_t>(i));
      break;
    case ValueType::kUint16:
      s.put(static_cast<uint16_t>(u));
      break;
    case ValueType::kInt16:
      s.put(static_cast<int16_t>(i));
      break;
    case ValueType::kUint32:
      s.put(static_cast<uint32_t>(u));
      break;
    case ValueType::kInt32:
      s.put(static_cast<int32_t>(i));
      break;
    case ValueType::kUint64:
      s.put(u);
      break;
    case ValueType::kInt64:
      s.put(i);
      break;
    case ValueType::kFloat32:
      s.put(static_cast<float>(d));
      break;
    case ValueType::kFloat64:
      s.put(d);
      break;
    case ValueType::kBool:
      s.put(static_cast<uint8_t>(v.as_bool().value_or(false) ? 1 : 0));
      break;
    case ValueType::kString: {
      const std::string* str = v.as_string();
      s.put_string(str ? std::string_view(*str) : std::string_view());
      break;
    }
    case ValueType::kArray: {
      const Array* a = v.as_array();
      const ValueType elem = a ? a->elem_type : ValueType::kUint8;
      s.put(static_cast<uint32_t>(elem));
      s.put<uint64_t>(a ? a->items.size() : 0);
      if (a) {
        for (const Value& item : a->items) put_value(s, elem, item);
      }
      break;
    }
  }
}

}  // namespace

void Writer::set(std::string key, Value value) {
  // A valid general.alignment set directly also governs the layout; an invalid one is written
  // as given (tests use that to build bad files) while the layout keeps the current alignment.
  if (key == kAlignmentKey) {
    std::optional<uint64_t> a = value.as_uint();
    if (a && *a > 0 && *a <= (uint64_t{1} << 30) && std::has_single_bit(*a)) {
      alignment_ = static_cast<uint32_t>(*a);
    }
  }
  for (auto& kv : kv_) {
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  }
  kv_.emplace_back(std::move(key), std::move(value));
}

void Writer::erase(std::string_view key) {
  std::erase_if(kv_, [&](const auto& kv) { return kv.first == key; });
}

void Writer::set_alignment(uint32_t alignment) {
  set(std::string(kAlignmentKey), Value::u32(alignment));
}

Status Writer::add_tensor(std::string name, DType type, std::vector<int64_t> shape,
                          std::span<const uint8_t> data) {
  if (name.empty()) return invalid_argument("tensor name must not be empty");
  for (const auto& t : tensors_) {
    if (t.name == name) return invalid_argument(fmt::format("tensor '{}' added twice", name));
  }
  if (shape.empty() || shape.size() > 4) {
    return invalid_argument(
        fmt::format("tensor '{}' has {} dimensions (must be 1..4)", name, shape.size()));
  }
  uint64_t rows = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0) {
      return invalid_argument(fmt::format("tensor '{}' dimension {} is {}", name, d, shape[d]));
    }
    if (d > 0 && __builtin_mul_overflow(rows, static_cast<uint64_t>(shape[d]), &rows)) {
      return invalid_argument(fmt::format("tensor '{}' is too large", name));
    }
  }
  std::optional<uint64_t> row = dtype_row_bytes(type, static_cast<uint64_t>(shape[0]));
  if (!row) {
    return invalid_argument(
        fmt::format("tensor '{}': {} elements per row is not a multiple of the "
                    "{} block size (or the type is unknown)",
                    name, shape[0], dtype_name(type)));
  }
  uint64_t n_bytes = 0;
  if (__builtin_mul_overflow(*row, rows, &n_bytes) || n_bytes != data.size()) {
    return invalid_argument(fmt::format("tensor '{}' needs {} bytes of {} data but {} were given",
                                        name, *row * rows, dtype_name(type), data.size()));
  }
  tensors_.push_back({std::move(name), type, std::move(shape), {data.begin(), data.end()}});
  return ok_status();
}

std::vector<uint8_t> Writer::to_bytes() const {
  std::vector<uint8_t> out;
  ByteSink s(out);
  s.put<uint32_t>(0x46554747u);  // "GGUF"
  s.put<uint32_t>(3);
  s.put<uint64_t>(tensors_.size());
  s.put<uint64_t>(kv_.size());
  for (const auto& [key, value] : kv_) {
    s.put_string(key);
    s.put(static_cast<uint32_t>(value.type));
    put_value(s, value.type, value);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    s.put_string(t.name);
    s.put(static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) s.put(static_cast<uint64_t>(d));
    s.put(static_cast<uint32_t>(t.type));
    s.put(offset);
    offset += (t.data.size() + alignment_ - 1) / alignment_ * alignment_;
  }
  s.pad_to(alignment_);
  for (const auto& t : tensors_) {
    out.insert(out.end(), t.data.begin(), t.data.end());
    s.pad_to(alignment_);
  }
  return out;
}

Status Writer::write(const std::string& path) const {
  const std::vector<uint8_t> bytes = to_bytes();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return io_error(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return io_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  return ok_status();
}

}  // namespace arc::gguf
