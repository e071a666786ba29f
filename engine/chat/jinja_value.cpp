#include "jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace arc::jinja {

Value Value::from_json(const nlohmann::ordered_json& j, int depth) {
  if (depth > 512) throw Error("a template variable is nested deeper than 512 levels");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return none();
    case nlohmann::ordered_json::value_t::boolean:
      return boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return number(static_cast<double>(u));
      return integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: {
      // The reference parses JSON in JavaScript, where 2.0 is the integer 2.
      double d = j.get<double>();
      if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15) {
        return integer(static_cast<int64_t>(d));
      }
      return number(d);
    }
    case nlohmann::ordered_json::value_t::string:
      return string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      Array a;
      a.reserve(j.size());
      for (const auto& e : j) a.push_back(from_json(e, depth + 1));
      return array(std::move(a));
    }
    case nlohmann::ordered_json::value_t::object: {
      Object o;
      o.reserve(j.size());
      for (const auto& [k, v] : j.items()) o.emplace_back(k, from_json(v, depth + 1));
      return object(std::move(o));
    }
    default:
      return Value();
  }
}

const std::string& Value::empty_string() {
  static const std::string kEmpty;
  return kEmpty;
}

const Value* Value::find(const std::string& key) const {
  if (kind_ != Kind::kObject) return nullptr;
  for (const auto& [k, v] : *obj_) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Value::set(const std::string& key, Value v) const {
  for (auto& [k, old] : *obj_) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  obj_->emplace_back(key, std::move(v));
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_ != 0;
    case Kind::kFloat:
      return f_ != 0.0;
    case Kind::kString:
      return !str().empty();
    case Kind::kArray:
      return !arr_->empty();
    case Kind::kObject:
      return namespace_ || !obj_->empty();
    case Kind::kFunction:
      return true;
  }
  return false;
}

const char* Value::type_name() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNone:
      return "none";
    case Kind::kBool:
      return "boolean";
    case Kind::kInt:
      return "integer";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "string";
    case Kind::kArray:
      return "list";
    case Kind::kObject:
      return namespace_ ? "namespace" : "object";
    case Kind::kFunction:
      return "function";
  }
  return "?";
}

std::string format_float(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0 && std::signbit(v)) return "-0.0";
  if (std::floor(v) == v && std::fabs(v) < 1e21) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form, as JS prints
  return std::string(buf, res.ptr);
}

std::string Value::to_output() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return "";
    case Kind::kBool:
      return b_ ? "true" : "false";
    case Kind::kInt:
      return std::to_string(i_);
    case Kind::kFloat:
      return format_float(f_);
    case Kind::kString:
      return str();
    case Kind::kArray:
    case Kind::kObject:
      return to_json_text(*this, JsonFormat{-1, ", ", ": "});
    case Kind::kFunction:
      return "<function>";
  }
  return "";
}

nlohmann::ordered_json Value::to_json() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
    case Kind::kFunction:
      return nullptr;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_;
    case Kind::kFloat:
      return f_;
    case Kind::kString:
      return str();
    case Kind::kArray: {
      auto j = nlohmann::ordered_json::array();
      for (const auto& e : *arr_) j.push_back(e.to_json());
      return j;
    }
    case Kind::kObject: {
      auto j = nlohmann::ordered_json::object();
      for (const auto& [k, v] : *obj_) j[k] = v.to_json();
      return j;
    }
  }
  return nullptr;
}

bool values_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Kind::kString:
      return a.str() == b.str();
    case Kind::kArray: {
      if (a.arr().size() != b.arr().size()) return false;
      for (size_t i = 0; i < a.arr().size(); ++i) {
        if (!values_equal(a.arr()[i], b.arr()[i])) return false;
      }
      return true;
    }
    case Kind::kObject: {
      if (a.obj().size() != b.obj().size()) return false;
      for (const auto& [k, v] : a.obj()) {
        const Value* o = b.find(k);
        if (!o || !values_equal(v, *o)) return false;
      }
      return true;
    }
    default:
      return &a.fn() == &b.fn();
  }
}

std::string json_quote(const std::string& s, bool ensure_ascii) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  auto hex4 = [&out](uint32_t u) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", u & 0xffffu);
    out += buf;
  };
  if (ensure_ascii) {
    for (uint32_t cp : utf8_decode(s)) {
      if (cp == '"') {
        out += "\\\"";
      } else if (cp == '\\') {
        out += "\\\\";
      } else if (cp == '\n') {
        out += "\\n";
      } else if (cp == '\r') {
        out += "\\r";
      } else if (cp == '\t') {
        out += "\\t";
      } else if (cp == '\b') {
        out += "\\b";
      } else if (cp == '\f') {
        out += "\\f";
      } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0xffff)) {
        hex4(cp);
      } else if (cp > 0xffff) {  // UTF-16 surrogate pair, as makeAsciiSafe leaves JS strings
        uint32_t v = cp - 0x10000;
        hex4(0xd800 + (v >> 10));
        hex4(0xdc00 + (v & 0x3ff));
      } else {
        out += static_cast<char>(cp);
      }
    }
  } else {
    for (unsigned char c : s) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20) {
            hex4(c);
          } else {
            out += static_cast<char>(c);
          }
      }
    }
  }
  out += '"';
  return out;
}

std::string to_json_text(const Value& v, const JsonFormat& fmt, int depth) {
  if (depth > 256) throw Error("tojson: value nested deeper than 256 levels");
  switch (v.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return "null";
    case Kind::kBool:
      return v.as_bool() ? "true" : "false";
    case Kind::kInt:
      return std::to_string(v.as_int());
    case Kind::kFloat: {
      // JSON.stringify prints integral floats without ".0".
      double d = v.as_double();
      if (!std::isfinite(d)) return "null";
      if (std::floor(d) == d && std::fabs(d) < 1e21) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.0f", d);
        return buf;
      }
      return format_float(d);
    }
    case Kind::kString:
      return json_quote(v.str(), fmt.ensure_ascii);
    case Kind::kFunction:
      throw Error("tojson: cannot convert a function to JSON");
    case Kind::kArray:
    case Kind::kObject:
      break;
  }
  const bool pretty = fmt.indent > 0;
  const std::string pad(pretty ? static_cast<size_t>(fmt.indent) : 0, ' ');
  std::string base = "\n";
  for (int i = 0; i < depth; ++i) base += pad;
  const std::string child = base + pad;
  std::string out;
  if (v.is_array()) {
    const Array& a = v.arr();
    out += '[';
    for (size_t i = 0; i < a.size(); ++i) {
      if (i) out += fmt.item_sep;
      if (pretty) out += child;
      out += to_json_text(a[i], fmt, depth + 1);
    }
    if (pretty && !a.empty()) out += base;
    out += ']';
    return out;
  }
  std::vector<const std::pair<std::string, Value>*> entries;
  for (const auto& e : v.obj()) entries.push_back(&e);
  if (fmt.sort_keys) {
    std::stable_sort(entries.begin(), entries.end(),
                     [](auto* x, auto* y) { return x->first < y->first; });
  }
  out += '{';
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) out += fmt.item_sep;
    if (pretty) out += child;
    out += json_quote(entries[i]->first, fmt.ensure_ascii);
    out += fmt.key_sep;
    out += to_json_text(entries[i]->second, fmt, depth + 1);
  }
  if (pretty && !entries.empty()) out += base;
  out += '}';
  return out;
}

std::vector<uint32_t> utf8_decode(const std::string& s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      out.push_back(0xfffd);  // invalid byte: one replacement character, never a crash
      ++i;
      continue;
    }
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      unsigned char cc = s[i + k];
      if ((cc & 0xc0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (!ok) {
      out.push_back(0xfffd);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end && i < cps.size(); ++i) {
    uint32_t cp = cps[i];
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  return out;
}

}  // namespace arc::jinja
