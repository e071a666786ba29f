// Filters, tests, methods and global functions of the Jinja subset: the ones real chat templates
// use (Qwen, Llama, DeepSeek, Gemma, gpt-oss/Harmony, Mistral, GLM).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>

#include "jinja_interp.h"

namespace arc::jinja {
namespace {

// Positional argument `i`, or keyword `name`, or undefined.
Value arg(const std::vector<Value>& args, const KwArgs& kwargs, size_t i, const char* name) {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return v;
  }
  return i < args.size() ? args[i] : Value();
}

bool is_ascii_space(uint32_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

std::string ascii_case(const std::string& s, bool upper) {
  std::string out = s;
  for (char& c : out) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

std::string title_case(const std::string& s) {
  std::string out = s;
  bool start = true;
  for (char& c : out) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alpha) {
      if (start && c >= 'a') c = static_cast<char>(c - 32);
      if (!start && c <= 'Z') c = static_cast<char>(c + 32);
      start = false;
    } else {
      start = true;
    }
  }
  return out;
}

Value split(const std::string& s, const Value& sep, const Value& maxsplit_v, const Node& at) {
  int64_t maxsplit = maxsplit_v.is_int() ? maxsplit_v.as_int() : -1;
  Array out;
  if (sep.is_undefined() || sep.is_none()) {  // split on runs of whitespace
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_ascii_space(static_cast<unsigned char>(s[i]))) ++i;
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        size_t end = s.size();
        while (end > i && is_ascii_space(static_cast<unsigned char>(s[end - 1]))) --end;
        out.push_back(Value::string(s.substr(i, end - i)));
        break;
      }
      size_t j = i;
      while (j < s.size() && !is_ascii_space(static_cast<unsigned char>(s[j]))) ++j;
      out.push_back(Value::string(s.substr(i, j - i)));
      i = j;
    }
    return Value::array(std::move(out));
  }
  if (!sep.is_string()) Interpreter::fail(at, "split() separator must be a string");
  if (sep.str().empty()) Interpreter::fail(at, "split() separator is empty");
  size_t start = 0;
  while (true) {
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) break;
    size_t p = s.find(sep.str(), start);
    if (p == std::string::npos) break;
    out.push_back(Value::string(s.substr(start, p - start)));
    start = p + sep.str().size();
  }
  out.push_back(Value::string(s.substr(start)));
  return Value::array(std::move(out));
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                        int64_t count) {
  if (from.empty()) return s;
  std::string out;
  size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t p = s.find(from, start);
    if (p == std::string::npos) break;
    out.append(s, start, p - start);
    out += to;
    start = p + from.size();
    ++done;
  }
  out.append(s, start, std::string::npos);
  return out;
}

// Attribute path lookup for map/selectattr/sort ("a.b" walks nested objects).
Value get_attribute(const Value& v, const std::string& path) {
  Value cur = v;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const Value* next = cur.find(key);
    if (!next) return Value();
    cur = *next;
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

int compare_values(const Value& a, const Value& b, const Node& at) {
  if (a.is_number() && b.is_number()) {
    return a.as_double() < b.as_double() ? -1 : a.as_double() > b.as_double() ? 1 : 0;
  }
  if (a.is_string() && b.is_string())
    return a.str().compare(b.str()) < 0 ? -1 : a.str() == b.str() ? 0 : 1;
  if (a.is_bool() && b.is_bool())
    return static_cast<int>(a.as_bool()) - static_cast<int>(b.as_bool());
  Interpreter::fail(at,
                    std::string("cannot compare a ") + a.type_name() + " with a " + b.type_name());
}

const Array& as_list(const Value& v, const char* filter, const Node& at) {
  if (!v.is_array())
    Interpreter::fail(at, std::string(filter) + " needs a list, not a " + v.type_name());
  return v.arr();
}

Array to_list(const Value& v, const Node& at) {
  if (v.is_array()) return v.arr();
  Array out;
  if (v.is_object()) {
    for (const auto& [k, _] : v.obj()) out.push_back(Value::string(k));
  } else if (v.is_string()) {
    auto cps = utf8_decode(v.str());
    for (size_t i = 0; i < cps.size(); ++i)
      out.push_back(Value::string(utf8_encode(cps, i, i + 1)));
  } else if (!v.is_undefined() && !v.is_none()) {
    Interpreter::fail(at, std::string("cannot make a list of a ") + v.type_name());
  }
  return out;
}

Value items_of(const Value& v) {
  Array out;
  for (const auto& [k, val] : v.obj()) out.push_back(Value::array({Value::string(k), val}));
  return Value::array(std::move(out));
}

std::string strftime_at(std::time_t t, const std::string& fmt) {
  std::tm tm{};
  gmtime_r(&t, &tm);  // UTC: the same prompt on every box of a cluster
  char buf[256];
  size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
  return std::string(buf, n);
}

}  // namespace

std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right) {
  auto cps = utf8_decode(s);
  std::vector<uint32_t> set;
  if (chars) set = utf8_decode(*chars);
  auto strip = [&](uint32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : is_ascii_space(c);
  };
  size_t b = 0, e = cps.size();
  if (left) {
    while (b < e && strip(cps[b])) ++b;
  }
  if (right) {
    while (e > b && strip(cps[e - 1])) --e;
  }
  return utf8_encode(cps, b, e);
}

Value py_slice(const Value& v, const Value& start_v, const Value& stop_v, const Value& step_v,
               const Node& at) {
  std::vector<uint32_t> cps;
  int64_t len;
  if (v.is_array()) {
    len = static_cast<int64_t>(v.arr().size());
  } else if (v.is_string()) {
    cps = utf8_decode(v.str());
    len = static_cast<int64_t>(cps.size());
  } else {
    Interpreter::fail(at, std::string("cannot slice a ") + v.type_name());
  }
  auto int_or = [&](const Value& x, const char* what) -> std::optional<int64_t> {
    if (x.is_undefined() || x.is_none()) return std::nullopt;
    if (!x.is_int()) Interpreter::fail(at, std::string("slice ") + what + " must be an integer");
    return x.as_int();
  };
  int64_t step = int_or(step_v, "step").value_or(1);
  if (step == 0) Interpreter::fail(at, "slice step cannot be zero");
  auto norm = [&](std::optional<int64_t> x, int64_t def) {
    if (!x) return def;
    int64_t i = *x < 0 ? *x + len : *x;
    if (step > 0) return std::clamp<int64_t>(i, 0, len);
    return std::clamp<int64_t>(i, -1, len - 1);
  };
  int64_t start = norm(int_or(start_v, "start"), step > 0 ? 0 : len - 1);
  int64_t stop = norm(int_or(stop_v, "stop"), step > 0 ? len : -1);
  std::vector<int64_t> idx;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) idx.push_back(i);
  if (v.is_array()) {
    Array out;
    for (int64_t i : idx) out.push_back(v.arr()[i]);
    return Value::array(std::move(out));
  }
  std::vector<uint32_t> picked;
  for (int64_t i : idx) picked.push_back(cps[i]);
  return Value::string(utf8_encode(picked, 0, picked.size()));
}

bool Interpreter::apply_test(const std::string& name, const Value& v, std::vector<Value>& args,
                             const Node& at) {
  auto other = [&]() -> const Value& {
    if (args.empty()) fail(at, "test '" + name + "' needs an argument");
    return args[0];
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "mapping") return v.is_object();
  if (name == "iterable") return v.is_array() || v.is_object() || v.is_string();
  if (name == "sequence") return v.is_array() || v.is_string() || v.is_object();
  if (name == "callable") return v.is_function();
  if (name == "odd" || name == "even") {
    if (!v.is_int()) fail(at, "test '" + name + "' needs an integer, not a " + v.type_name());
    return (v.as_int() % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    const Value& d = other();
    if (!v.is_int() || !d.is_int() || d.as_int() == 0)
      fail(at, "divisibleby needs non-zero integers");
    return v.as_int() % d.as_int() == 0;
  }
  if (name == "lower") return v.is_string() && ascii_case(v.str(), false) == v.str();
  if (name == "upper") return v.is_string() && ascii_case(v.str(), true) == v.str();
  if (name == "eq" || name == "equalto" || name == "==") return values_equal(v, other());
  if (name == "ne" || name == "!=") return !values_equal(v, other());
  if (name == "lt" || name == "lessthan") return compare_values(v, other(), at) < 0;
  if (name == "gt" || name == "greaterthan") return compare_values(v, other(), at) > 0;
  if (name == "le") return compare_values(v, other(), at) <= 0;
  if (name == "ge") return compare_values(v, other(), at) >= 0;
  if (name == "in") {
    const Value& c = other();
    if (c.is_string()) return v.is_string() && c.str().find(v.str()) != std::string::npos;
    if (c.is_array()) {
      for (const Value& e : c.arr()) {
        if (values_equal(v, e)) return true;
      }
      return false;
    }
    if (c.is_object()) return v.is_string() && c.find(v.str());
    return false;
  }
  fail(at, "unknown test '" + name + "'");
}

Value Interpreter::apply_filter(const std::string& name, Value v, std::vector<Value>& args,
                                KwArgs& kwargs, const Node& at) {
  auto need_string = [&]() -> const std::string& {
    if (!v.is_string()) fail(at, "filter '" + name + "' needs a string, not a " + v.type_name());
    return v.str();
  };
  if (name == "tojson") {
    JsonFormat fmt;
    Value indent = arg(args, kwargs, 0, "indent");
    fmt.indent =
        indent.is_int() ? static_cast<int>(std::clamp<int64_t>(indent.as_int(), 0, 64)) : -1;
    fmt.item_sep = fmt.indent > 0 ? "," : ", ";
    fmt.key_sep = ": ";
    Value seps = arg(args, kwargs, 99, "separators");
    if (seps.is_array() && seps.arr().size() == 2 && seps.arr()[0].is_string() &&
        seps.arr()[1].is_string()) {
      fmt.item_sep = seps.arr()[0].str();
      fmt.key_sep = seps.arr()[1].str();
    }
    fmt.sort_keys = arg(args, kwargs, 99, "sort_keys").truthy();
    fmt.ensure_ascii = arg(args, kwargs, 99, "ensure_ascii").truthy();
    return Value::string(to_json_text(v, fmt));
  }
  if (name == "trim" || name == "strip") {
    Value chars = arg(args, kwargs, 0, "chars");
    return Value::string(
        py_strip(need_string(), chars.is_string() ? &chars.str() : nullptr, true, true));
  }
  if (name == "length" || name == "count") {
    if (v.is_string()) return Value::integer(static_cast<int64_t>(utf8_decode(v.str()).size()));
    if (v.is_array()) return Value::integer(static_cast<int64_t>(v.arr().size()));
    if (v.is_object()) return Value::integer(static_cast<int64_t>(v.obj().size()));
    if (v.is_undefined()) return Value::integer(0);
    fail(at, std::string("cannot take the length of a ") + v.type_name());
  }
  if (name == "default" || name == "d") {
    Value def = arg(args, kwargs, 0, "default_value");
    bool boolean = arg(args, kwargs, 1, "boolean").truthy();
    if (v.is_undefined() || (boolean && !v.truthy()))
      return def.is_undefined() ? Value::string("") : def;
    return v;
  }
  if (name == "join") {
    Value sep = arg(args, kwargs, 0, "d");
    Value attribute = arg(args, kwargs, 1, "attribute");
    std::string out;
    Array list = to_list(v, at);
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out += sep.is_string() ? sep.str() : "";
      out +=
          (attribute.is_string() ? get_attribute(list[i], attribute.str()) : list[i]).to_output();
      check_size(out.size(), at);
    }
    return Value::string(std::move(out));
  }
  if (name == "items") {
    if (v.is_undefined() || v.is_none()) return Value::array();
    if (!v.is_object())
      fail(at, std::string("filter 'items' needs a mapping, not a ") + v.type_name());
    return items_of(v);
  }
  if (name == "dictsort") {
    if (!v.is_object()) fail(at, "filter 'dictsort' needs a mapping");
    Value items = items_of(v);
    std::stable_sort(items.arr().begin(), items.arr().end(), [&](const Value& a, const Value& b) {
      return a.arr()[0].str() < b.arr()[0].str();
    });
    return items;
  }
  if (name == "list") return Value::array(to_list(v, at));
  if (name == "first" || name == "last") {
    if (v.is_string()) {
      auto cps = utf8_decode(v.str());
      if (cps.empty()) return Value();
      size_t i = name == "first" ? 0 : cps.size() - 1;
      return Value::string(utf8_encode(cps, i, i + 1));
    }
    const Array& a = as_list(v, name.c_str(), at);
    if (a.empty()) return Value();
    return name == "first" ? a.front() : a.back();
  }
  if (name == "upper" || name == "lower")
    return Value::string(ascii_case(need_string(), name == "upper"));
  if (name == "title") return Value::string(title_case(need_string()));
  if (name == "capitalize") {
    std::string s = ascii_case(need_string(), false);
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 32);
    return Value::string(s);
  }
  if (name == "replace") {
    Value from = arg(args, kwargs, 0, "old"), to = arg(args, kwargs, 1, "new");
    Value count = arg(args, kwargs, 2, "count");
    if (!from.is_string() || !to.is_string()) fail(at, "replace needs two strings");
    std::string s =
        replace_all(need_string(), from.str(), to.str(), count.is_int() ? count.as_int() : -1);
    check_size(s.size(), at);
    return Value::string(std::move(s));
  }
  if (name == "string") return v.is_string() ? v : Value::string(v.to_output());
  if (name == "safe" || name == "e" || name == "escape")
    return v;  // chat templates never autoescape
  if (name == "int") {
    if (v.is_int()) return v;
    if (v.is_float()) return Value::integer(static_cast<int64_t>(v.as_double()));
    if (v.is_bool()) return Value::integer(v.as_bool() ? 1 : 0);
    if (v.is_string()) {
      try {
        size_t used = 0;
        int64_t i = std::stoll(py_strip(v.str(), nullptr, true, true), &used);
        return Value::integer(i);
      } catch (const std::exception&) {
      }
    }
    Value def = arg(args, kwargs, 0, "default");
    return def.is_undefined() ? Value::integer(0) : def;
  }
  if (name == "float") {
    if (v.is_number()) return Value::number(v.as_double());
    if (v.is_string()) {
      try {
        return Value::number(std::stod(v.str()));
      } catch (const std::exception&) {
      }
    }
    Value def = arg(args, kwargs, 0, "default");
    return def.is_undefined() ? Value::number(0.0) : def;
  }
  if (name == "abs") {
    if (!v.is_number()) fail(at, "filter 'abs' needs a number");
    return v.is_int() ? Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int())
                      : Value::number(std::fabs(v.as_double()));
  }
  if (name == "round") {
    if (!v.is_number()) fail(at, "filter 'round' needs a number");
    Value prec = arg(args, kwargs, 0, "precision");
    Value method = arg(args, kwargs, 1, "method");
    double scale = std::pow(10.0, prec.is_int() ? static_cast<double>(prec.as_int()) : 0.0);
    double x = v.as_double() * scale;
    std::string m = method.is_string() ? method.str() : "common";
    x = m == "floor" ? std::floor(x) : m == "ceil" ? std::ceil(x) : std::round(x);
    return Value::number(x / scale);
  }
  if (name == "map") {
    Value attribute = arg(args, kwargs, 99, "attribute");
    Array out;
    for (const Value& e : to_list(v, at)) {
      if (attribute.is_string()) {
        Value got = get_attribute(e, attribute.str());
        if (got.is_undefined()) got = arg(args, kwargs, 99, "default");
        out.push_back(got);
      } else {
        if (args.empty() || !args[0].is_string()) fail(at, "map needs attribute= or a filter name");
        std::vector<Value> rest(args.begin() + 1, args.end());
        KwArgs none;
        out.push_back(apply_filter(args[0].str(), e, rest, none, at));
      }
    }
    return Value::array(std::move(out));
  }
  if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject") {
    const bool by_attr = name == "selectattr" || name == "rejectattr";
    const bool keep = name == "selectattr" || name == "select";
    size_t ti = by_attr ? 1 : 0;
    if (by_attr && (args.empty() || !args[0].is_string()))
      fail(at, name + " needs an attribute name");
    Array out;
    for (const Value& e : to_list(v, at)) {
      Value subject = by_attr ? get_attribute(e, args[0].str()) : e;
      bool r;
      if (args.size() > ti) {
        if (!args[ti].is_string()) fail(at, name + " needs a test name");
        std::vector<Value> rest(args.begin() + static_cast<long>(ti) + 1, args.end());
        r = apply_test(args[ti].str(), subject, rest, at);
      } else {
        r = subject.truthy();
      }
      if (r == keep) out.push_back(e);
    }
    return Value::array(std::move(out));
  }
  if (name == "unique") {
    Array out;
    for (const Value& e : to_list(v, at)) {
      bool seen = false;
      for (const Value& o : out) seen = seen || values_equal(o, e);
      if (!seen) out.push_back(e);
    }
    return Value::array(std::move(out));
  }
  if (name == "reverse") {
    if (v.is_string()) return py_slice(v, Value(), Value(), Value::integer(-1), at);
    Array a = to_list(v, at);
    std::reverse(a.begin(), a.end());
    return Value::array(std::move(a));
  }
  if (name == "sort") {
    Array a = to_list(v, at);
    bool reverse = arg(args, kwargs, 0, "reverse").truthy();
    Value attribute = arg(args, kwargs, 2, "attribute");
    std::stable_sort(a.begin(), a.end(), [&](const Value& x, const Value& y) {
      const Value xa = attribute.is_string() ? get_attribute(x, attribute.str()) : x;
      const Value ya = attribute.is_string() ? get_attribute(y, attribute.str()) : y;
      int c = compare_values(xa, ya, at);
      return reverse ? c > 0 : c < 0;
    });
    return Value::array(std::move(a));
  }
  if (name == "sum") {
    Value total = Value::integer(0);
    for (const Value& e : as_list(v, "sum", at)) {
      if (!e.is_number()) fail(at, "sum needs numbers");
      total = total.is_int() && e.is_int() ? Value::integer(total.as_int() + e.as_int())
                                           : Value::number(total.as_double() + e.as_double());
    }
    return total;
  }
  if (name == "min" || name == "max") {
    const Array& a = as_list(v, name.c_str(), at);
    if (a.empty()) return Value();
    Value best = a[0];
    for (const Value& e : a) {
      int c = compare_values(e, best, at);
      if ((name == "min" && c < 0) || (name == "max" && c > 0)) best = e;
    }
    return best;
  }
  if (name == "batch") {
    Value size = arg(args, kwargs, 0, "linecount");
    if (!size.is_int() || size.as_int() <= 0) fail(at, "batch needs a positive size");
    Array out, cur;
    for (const Value& e : to_list(v, at)) {
      cur.push_back(e);
      if (static_cast<int64_t>(cur.size()) == size.as_int()) {
        out.push_back(Value::array(std::move(cur)));
        cur.clear();
      }
    }
    if (!cur.empty()) {
      Value fill = arg(args, kwargs, 1, "fill_with");
      if (!fill.is_undefined()) {
        while (static_cast<int64_t>(cur.size()) < size.as_int()) cur.push_back(fill);
      }
      out.push_back(Value::array(std::move(cur)));
    }
    return Value::array(std::move(out));
  }
  if (name == "indent") {
    Value width = arg(args, kwargs, 0, "width");
    bool first = arg(args, kwargs, 1, "first").truthy();
    bool blank = arg(args, kwargs, 2, "blank").truthy();
    std::string pad =
        width.is_string()
            ? width.str()
            : std::string(width.is_int()
                              ? static_cast<size_t>(std::clamp<int64_t>(width.as_int(), 0, 256))
                              : 4,
                          ' ');
    const std::string& s = need_string();
    std::string out;
    size_t start = 0;
    bool line0 = true;
    while (start <= s.size()) {
      size_t nl = s.find('\n', start);
      std::string line = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      if ((!line0 || first) && (blank || !line.empty())) out += pad;
      out += line;
      if (nl == std::string::npos) break;
      out += '\n';
      start = nl + 1;
      line0 = false;
    }
    return Value::string(std::move(out));
  }
  if (name == "wordcount")
    return Value::integer(
        static_cast<int64_t>(split(need_string(), Value(), Value(), at).arr().size()));
  if (name == "split")
    return split(need_string(), arg(args, kwargs, 0, "sep"), arg(args, kwargs, 1, "maxsplit"), at);
  if (name == "format") {
    // printf-style "%s" / "%d" with positional arguments.
    const std::string& f = need_string();
    std::string out;
    size_t ai = 0;
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i] != '%' || i + 1 >= f.size()) {
        out += f[i];
        continue;
      }
      char c = f[++i];
      if (c == '%') {
        out += '%';
      } else {
        if (ai >= args.size()) fail(at, "format: not enough arguments");
        out += args[ai++].to_output();
      }
    }
    return Value::string(std::move(out));
  }
  fail(at, "unknown filter '" + name + "'");
}

bool Interpreter::call_method(const Value& self, const std::string& name, std::vector<Value>& args,
                              KwArgs& kwargs, const Node& at, Value& result) {
  if (self.is_string()) {
    const std::string& s = self.str();
    Value a0 = arg(args, kwargs, 0, "");
    if (name == "startswith" || name == "endswith") {
      std::vector<std::string> options;
      if (a0.is_string()) options.push_back(a0.str());
      if (a0.is_array()) {
        for (const Value& e : a0.arr()) {
          if (e.is_string()) options.push_back(e.str());
        }
      }
      if (options.empty()) fail(at, name + "() needs a string");
      bool r = false;
      for (const auto& o : options) {
        r = r || (o.size() <= s.size() &&
                  (name == "startswith" ? s.compare(0, o.size(), o) == 0
                                        : s.compare(s.size() - o.size(), o.size(), o) == 0));
      }
      result = Value::boolean(r);
      return true;
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      const std::string* chars = a0.is_string() ? &a0.str() : nullptr;
      result = Value::string(py_strip(s, chars, name != "rstrip", name != "lstrip"));
      return true;
    }
    if (name == "split") {
      result = split(s, a0, arg(args, kwargs, 1, "maxsplit"), at);
      return true;
    }
    if (name == "join") {
      std::string out;
      Array list = to_list(a0, at);
      for (size_t i = 0; i < list.size(); ++i) {
        if (i) out += s;
        out += list[i].to_output();
      }
      result = Value::string(std::move(out));
      return true;
    }
    if (name == "find") {
      if (!a0.is_string()) fail(at, "find() needs a string");
      size_t p = s.find(a0.str());
      result = Value::integer(
          p == std::string::npos ? -1 : static_cast<int64_t>(utf8_decode(s.substr(0, p)).size()));
      return true;
    }
    if (name == "upper" || name == "lower" || name == "title" || name == "capitalize" ||
        name == "replace" || name == "format") {
      result = apply_filter(name, self, args, kwargs, at);
      return true;
    }
    if (name == "isdigit" || name == "isalpha" || name == "isspace") {
      bool r = !s.empty();
      for (unsigned char c : s) {
        r = r && (name == "isdigit"   ? std::isdigit(c)
                  : name == "isalpha" ? std::isalpha(c)
                                      : std::isspace(c));
      }
      result = Value::boolean(r);
      return true;
    }
    return false;
  }
  if (self.is_object()) {
    if (name == "items") {
      result = items_of(self);
      return true;
    }
    if (name == "keys" || name == "values") {
      Array out;
      for (const auto& [k, v] : self.obj()) out.push_back(name == "keys" ? Value::string(k) : v);
      result = Value::array(std::move(out));
      return true;
    }
    if (name == "get") {
      Value key = arg(args, kwargs, 0, "key");
      const Value* v = key.is_string() ? self.find(key.str()) : nullptr;
      result = v ? *v : (args.size() > 1 ? args[1] : Value::none());
      return true;
    }
    if (name == "update") {
      Value other = arg(args, kwargs, 0, "");
      if (other.is_object()) {
        for (const auto& [k, v] : other.obj()) self.set(k, v);
      }
      for (const auto& [k, v] : kwargs) self.set(k, v);
      result = Value::none();
      return true;
    }
    return false;
  }
  if (self.is_array()) {
    if (name == "append") {
      if (args.size() != 1) fail(at, "append() takes one argument");
      self.arr().push_back(args[0]);
      result = Value::none();
      return true;
    }
    if (name == "pop") {
      if (self.arr().empty()) fail(at, "pop() from an empty list");
      int64_t len = static_cast<int64_t>(self.arr().size());
      int64_t i = args.empty() || !args[0].is_int() ? len - 1 : args[0].as_int();
      if (i < 0) i += len;
      if (i < 0 || i >= len) fail(at, "pop() index out of range");
      result = self.arr()[i];
      self.arr().erase(self.arr().begin() + i);
      return true;
    }
    if (name == "index" || name == "count") {
      int64_t found = -1, count = 0;
      for (size_t i = 0; i < self.arr().size(); ++i) {
        if (!args.empty() && values_equal(self.arr()[i], args[0])) {
          if (found < 0) found = static_cast<int64_t>(i);
          ++count;
        }
      }
      if (name == "index" && found < 0) fail(at, "index(): value not in list");
      result = Value::integer(name == "index" ? found : count);
      return true;
    }
    return false;
  }
  return false;
}

void Interpreter::install_globals(Scope& scope) {
  scope.vars["raise_exception"] =
      Value::function([](Interpreter&, std::vector<Value>& args, KwArgs&) -> Value {
        throw Error(args.empty() ? "raise_exception() called" : args[0].to_output());
      });
  scope.vars["namespace"] =
      Value::function([](Interpreter&, std::vector<Value>& args, KwArgs& kwargs) {
        Value ns = Value::object({}, /*is_namespace=*/true);
        for (const Value& a : args) {
          if (a.is_object()) {
            for (const auto& [k, v] : a.obj()) ns.set(k, v);
          }
        }
        for (const auto& [k, v] : kwargs) ns.set(k, v);
        return ns;
      });
  scope.vars["dict"] = Value::function([](Interpreter&, std::vector<Value>& args, KwArgs& kwargs) {
    Value d = Value::object();
    for (const Value& a : args) {
      if (a.is_object()) {
        for (const auto& [k, v] : a.obj()) d.set(k, v);
      }
    }
    for (const auto& [k, v] : kwargs) d.set(k, v);
    return d;
  });
  scope.vars["range"] = Value::function([](Interpreter& in, std::vector<Value>& args, KwArgs&) {
    int64_t start = 0, stop = 0, step = 1;
    for (const Value& a : args) {
      if (!a.is_int()) throw Error("range() needs integers");
    }
    if (args.size() == 1) {
      stop = args[0].as_int();
    } else if (args.size() >= 2) {
      start = args[0].as_int();
      stop = args[1].as_int();
      if (args.size() >= 3) step = args[2].as_int();
    }
    if (step == 0) throw Error("range() step cannot be zero");
    const double count = std::ceil((static_cast<double>(stop) - static_cast<double>(start)) /
                                   static_cast<double>(step));
    if (count > static_cast<double>(in.limits().max_range)) {
      throw Error("range() is too long (more than " + std::to_string(in.limits().max_range) +
                  " items)");
    }
    Array out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      out.push_back(Value::integer(i));
    return Value::array(std::move(out));
  });
  scope.vars["strftime_now"] =
      Value::function([](Interpreter& in, std::vector<Value>& args, KwArgs&) {
        if (args.empty() || !args[0].is_string())
          throw Error("strftime_now() needs a format string");
        return Value::string(strftime_at(in.now(), args[0].str()));
      });
}

}  // namespace arc::jinja
