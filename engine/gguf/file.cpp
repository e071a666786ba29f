// File: accessors over parsed metadata and tensors, and File::open, which maps a file (or every
// part of a split model NAME-0000i-of-0000N.gguf) and validates it.
#include <fmt/format.h>

#include <filesystem>

#include "arc/gguf.h"

namespace arc::gguf {

File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

int64_t TensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t TensorInfo::n_rows() const {
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

uint64_t File::file_bytes() const {
  uint64_t total = 0;
  for (uint64_t b : part_sizes_) total += b;
  return total;
}

const Value* File::find(std::string_view key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

std::optional<std::string> File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr || v->as_string() == nullptr) return std::nullopt;
  return *v->as_string();
}

std::optional<int64_t> File::get_int(std::string_view key) const {
  const Value* v = find(key);
  return v ? v->as_int() : std::nullopt;
}

std::optional<double> File::get_float(std::string_view key) const {
  const Value* v = find(key);
  return v ? v->as_float() : std::nullopt;
}

std::optional<bool> File::get_bool(std::string_view key) const {
  const Value* v = find(key);
  return v ? v->as_bool() : std::nullopt;
}

std::optional<std::vector<std::string>> File::get_string_array(std::string_view key) const {
  const Value* v = find(key);
  const Array* a = v ? v->as_array() : nullptr;
  if (a == nullptr || a->elem_type != ValueType::kString) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(a->items.size());
  for (const Value& item : a->items) out.push_back(*item.as_string());
  return out;
}

std::optional<std::vector<int64_t>> File::get_int_array(std::string_view key) const {
  const Value* v = find(key);
  const Array* a = v ? v->as_array() : nullptr;
  if (a == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(a->items.size());
  for (const Value& item : a->items) {
    std::optional<int64_t> x = item.as_int();
    if (!x) return std::nullopt;  // not integers, or a uint64 beyond int64
    out.push_back(*x);
  }
  return out;
}

std::optional<std::vector<double>> File::get_float_array(std::string_view key) const {
  const Value* v = find(key);
  const Array* a = v ? v->as_array() : nullptr;
  if (a == nullptr) return std::nullopt;
  std::vector<double> out;
  out.reserve(a->items.size());
  for (const Value& item : a->items) {
    std::optional<double> x = item.as_float();
    if (!x) return std::nullopt;
    out.push_back(*x);
  }
  return out;
}

std::string File::architecture() const {
  return get_string("general.architecture").value_or("");
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> File::tensor_data(const TensorInfo& t) const {
  if (t.file_index >= bytes_.size()) return {};
  return bytes_[t.file_index].subspan(data_offsets_[t.file_index] + t.offset, t.n_bytes);
}

const MappedFile* File::mapping(uint32_t file_index) const {
  return file_index < maps_.size() ? &maps_[file_index] : nullptr;
}

uint64_t File::absolute_offset(const TensorInfo& t) const {
  if (t.file_index >= data_offsets_.size()) return 0;
  return data_offsets_[t.file_index] + t.offset;
}

// Matched by hand from the end: std::regex recurses once per character and overflows the stack
// on long names (a 30,000-character path from a client).
std::optional<SplitName> parse_split_name(std::string_view path) {
  static constexpr std::string_view kSuffix = ".gguf";
  // "-" 5 digits "-of-" 5 digits ".gguf"
  constexpr size_t kTail = 1 + 5 + 4 + 5 + kSuffix.size();
  if (path.size() < kTail) return std::nullopt;
  const std::string_view tail = path.substr(path.size() - kTail);
  auto number = [](std::string_view digits) -> std::optional<uint32_t> {
    uint32_t v = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    return v;
  };
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || tail.substr(15) != kSuffix) {
    return std::nullopt;
  }
  const auto no = number(tail.substr(1, 5));
  const auto count = number(tail.substr(10, 5));
  if (!no || !count || *count == 0 || *no == 0 || *no > *count) return std::nullopt;
  return SplitName{std::string(path.substr(0, path.size() - kTail)), *no, *count};
}

std::string split_part_name(const SplitName& s, uint32_t no) {
  return fmt::format("{}-{:05d}-of-{:05d}.gguf", s.prefix, no, s.count);
}

Result<File> File::open(const std::string& path) {
  std::optional<SplitName> split = parse_split_name(path);
  const uint32_t n_parts = split ? split->count : 1;

  // Map every part first so a missing one is reported before any parsing work.
  std::vector<MappedFile> maps;
  for (uint32_t i = 0; i < n_parts; ++i) {
    const std::string part = split ? split_part_name(*split, i + 1) : path;
    std::error_code ec;  // a name too long for the file system is a missing part, not a throw
    if (split && !std::filesystem::exists(part, ec)) {
      return not_found(
          fmt::format("{}: the model is split into {} files but part {} ({}) is "
                      "missing; download every part into the same folder",
                      path, n_parts, i + 1, part));
    }
    ARC_ASSIGN_OR_RETURN(MappedFile m, MappedFile::open(part));
    maps.push_back(std::move(m));
  }

  std::vector<File> parts;
  for (uint32_t i = 0; i < n_parts; ++i) {
    ARC_ASSIGN_OR_RETURN(File part, File::parse(maps[i].bytes(), maps[i].path()));
    std::optional<int64_t> count = part.get_int("split.count");
    std::optional<int64_t> no = part.get_int("split.no");
    if (!split && count && *count > 1) {
      return invalid_argument(
          fmt::format("{} is part {} of a model split into {} files, but its name does not follow "
                      "NAME-0000i-of-0000N.gguf; rename the parts so they can be found together",
                      path, no ? *no + 1 : 0, *count));
    }
    parts.push_back(std::move(part));
  }
  File out;
  if (split) {
    ARC_ASSIGN_OR_RETURN(out, join_splits(std::move(parts), path));
  } else {
    out = std::move(parts[0]);
    out.path_ = path;
  }
  out.maps_ = std::move(maps);
  return out;
}

Result<File> File::join_splits(std::vector<File> parts, std::string path) {
  if (parts.empty()) return invalid_argument(path + ": no parts to join");
  const size_t n_parts = parts.size();
  File out;
  for (size_t i = 0; i < n_parts; ++i) {
    File& part = parts[i];
    std::optional<int64_t> count = part.get_int("split.count");
    std::optional<int64_t> no = part.get_int("split.no");
    if (n_parts > 1 || count) {
      if (!count || *count != static_cast<int64_t>(n_parts) || !no ||
          *no != static_cast<int64_t>(i)) {
        return data_loss(fmt::format(
            "{}: its split metadata (split.no {}, split.count {}) does not match its name (part "
            "{} of {}); the parts come from different downloads",
            part.path(), no ? std::to_string(*no) : "missing",
            count ? std::to_string(*count) : "missing", i + 1, n_parts));
      }
    }
    if (i == 0) {
      out = std::move(part);
      out.path_ = path;
      continue;
    }
    // Later parts contribute their tensors; metadata comes from the first part.
    if (!part.bytes_.empty()) out.bytes_.push_back(part.bytes_[0]);
    out.part_sizes_.push_back(part.part_sizes_[0]);
    out.data_offsets_.push_back(part.data_offsets_[0]);
    for (TensorInfo& t : part.tensors_) {
      if (out.tensor_index_.count(t.name) != 0) {
        return data_loss(
            fmt::format("{}: tensor '{}' is also in an earlier part; the parts come "
                        "from different downloads",
                        part.path(), t.name));
      }
      t.file_index = static_cast<uint32_t>(i);
      out.tensor_index_.emplace(t.name, out.tensors_.size());
      out.tensors_.push_back(std::move(t));
    }
  }
  if (std::optional<int64_t> expected = out.get_int("split.tensors.count")) {
    if (*expected != static_cast<int64_t>(out.tensors_.size())) {
      return data_loss(
          fmt::format("{}: split.tensors.count says {} tensors but the {} parts hold "
                      "{}; a part is from a different download",
                      path, *expected, n_parts, out.tensors_.size()));
    }
  }
  return out;
}

}  // namespace arc::gguf
