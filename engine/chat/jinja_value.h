// The value model of the chat-template interpreter: Jinja's dynamic values with the distinction
// between undefined (a missing variable or key: falsy, prints "") and none (JSON null).
// Arrays and objects are shared by reference, as in Jinja (a namespace or list mutated through one
// name is seen through every other). Objects keep insertion order, as JSON objects in
// tokenizer_config.json and Python dicts do, so tojson output matches the reference.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace arc::jinja {

// A template error with its position (1-based; 0 when unknown). Thrown inside the interpreter
// only; the public API turns it into a Status.
class Error : public std::runtime_error {
 public:
  Error(std::string message, int line = 0, int column = 0)
      : std::runtime_error(std::move(message)), line(line), column(column) {}
  int line;
  int column;
};

class Value;
class Interpreter;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;
using KwArgs = std::vector<std::pair<std::string, Value>>;

// A built-in function, method or macro: (positional args, keyword args) -> value.
using Function = std::function<Value(Interpreter&, std::vector<Value>&, KwArgs&)>;

enum class Kind : uint8_t {
  kUndefined = 0,
  kNone = 1,
  kBool = 2,
  kInt = 3,
  kFloat = 4,
  kString = 5,
  kArray = 6,
  kObject = 7,
  kFunction = 8,
};

class Value {
 public:
  Value() = default;
  static Value none() { return Value(Kind::kNone); }
  static Value boolean(bool v) {
    Value r(Kind::kBool);
    r.b_ = v;
    return r;
  }
  static Value integer(int64_t v) {
    Value r(Kind::kInt);
    r.i_ = v;
    return r;
  }
  static Value number(double v) {
    Value r(Kind::kFloat);
    r.f_ = v;
    return r;
  }
  static Value string(std::string v) {
    Value r(Kind::kString);
    r.s_ = std::make_shared<const std::string>(std::move(v));
    return r;
  }
  static Value array(Array v = {}) {
    Value r(Kind::kArray);
    r.arr_ = std::make_shared<Array>(std::move(v));
    return r;
  }
  static Value object(Object v = {}, bool is_namespace = false) {
    Value r(Kind::kObject);
    r.obj_ = std::make_shared<Object>(std::move(v));
    r.namespace_ = is_namespace;
    return r;
  }
  static Value function(Function f) {
    Value r(Kind::kFunction);
    r.fn_ = std::make_shared<Function>(std::move(f));
    return r;
  }
  // Throws Error for values nested deeper than 512 levels (the conversion recurses).
  static Value from_json(const nlohmann::ordered_json& j, int depth = 0);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_function() const { return kind_ == Kind::kFunction; }
  bool is_namespace() const { return namespace_; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return i_; }
  double as_double() const { return kind_ == Kind::kInt ? static_cast<double>(i_) : f_; }
  const std::string& str() const { return s_ ? *s_ : empty_string(); }
  Array& arr() const { return *arr_; }
  Object& obj() const { return *obj_; }
  Function& fn() const { return *fn_; }

  // Object member lookup; nullptr when absent.
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value v) const;

  bool truthy() const;
  // How {{ value }} prints, as the reference renderer does (none and undefined print "",
  // booleans "true"/"false", floats with a ".0" when integral, containers as JSON).
  std::string to_output() const;
  nlohmann::ordered_json to_json() const;
  const char* type_name() const;

 private:
  explicit Value(Kind k) : kind_(k) {}
  Kind kind_ = Kind::kUndefined;
  bool namespace_ = false;
  bool b_ = false;
  int64_t i_ = 0;
  double f_ = 0;
  static const std::string& empty_string();
  std::shared_ptr<const std::string> s_;  // shared: values are copied often, strings can be long
  std::shared_ptr<Array> arr_;
  std::shared_ptr<Object> obj_;
  std::shared_ptr<Function> fn_;
};

bool values_equal(const Value& a, const Value& b);

// JSON text as the reference's tojson writes it: separators ", " and ": " (or "," and ": " with
// an indent), non-ASCII characters kept, strings escaped as JSON.stringify does.
struct JsonFormat {
  int indent = -1;  // < 0: one line
  std::string item_sep;
  std::string key_sep;
  bool sort_keys = false;
  bool ensure_ascii = false;
};
std::string to_json_text(const Value& v, const JsonFormat& fmt, int depth = 0);
std::string json_quote(const std::string& s, bool ensure_ascii = false);
std::string format_float(double v);

// UTF-8 helpers: strings are indexed by code point, as Python (and, for the BMP, JS) do.
std::vector<uint32_t> utf8_decode(const std::string& s);
std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin, size_t end);

}  // namespace arc::jinja
