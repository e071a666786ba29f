// Metadata values: type names and the checked conversions of gguf.h.
#include <limits>

#include "arc/gguf.h"

namespace arc::gguf {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
      return "uint8";
    case ValueType::kInt8:
      return "int8";
    case ValueType::kUint16:
      return "uint16";
    case ValueType::kInt16:
      return "int16";
    case ValueType::kUint32:
      return "uint32";
    case ValueType::kInt32:
      return "int32";
    case ValueType::kFloat32:
      return "float32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kUint64:
      return "uint64";
    case ValueType::kInt64:
      return "int64";
    case ValueType::kFloat64:
      return "float64";
  }
  return "unknown";
}

Value Value::array(Array a) {
  return {ValueType::kArray, std::make_shared<Array>(std::move(a))};
}

std::optional<int64_t> Value::as_int() const {
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return std::nullopt;
}

std::optional<uint64_t> Value::as_uint() const {
  if (const auto* u = std::get_if<uint64_t>(&v)) return *u;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    if (*i < 0) return std::nullopt;
    return static_cast<uint64_t>(*i);
  }
  return std::nullopt;
}

std::optional<double> Value::as_float() const {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> Value::as_bool() const {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  return std::nullopt;
}

const std::string* Value::as_string() const {
  return std::get_if<std::string>(&v);
}

const Array* Value::as_array() const {
  if (const auto* a = std::get_if<std::shared_ptr<Array>>(&v)) return a->get();
  return nullptr;
}

}  // namespace arc::gguf
