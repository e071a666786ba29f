#include "grammar/json_schema.h"

#include <algorithm>
#include <array>
#include <set>

namespace arc::grammar {

using nlohmann::ordered_json;

namespace {

// Keywords that say nothing about which documents are valid.
const std::set<std::string> kAnnotations = {"title",    "description", "default",  "examples",
                                            "$schema",  "$id",         "$comment", "deprecated",
                                            "readOnly", "writeOnly",   "$defs",    "definitions"};
const std::set<std::string> kSupported = {
    "type",  "nullable", "enum",       "const",     "anyOf",
    "allOf", "$ref",     "properties", "required",  "additionalProperties",
    "items", "minItems", "maxItems",   "minLength", "maxLength",
    "format"};
constexpr const char* kSupportedList =
    "type, nullable, enum, const, anyOf, allOf (one schema), $ref, properties, required, "
    "additionalProperties: false, items, minItems, maxItems, minLength, maxLength, format (date, "
    "time, date-time, uuid)";
// Counted repetitions become a chain of rules: keep the grammar small.
constexpr int64_t kMaxCount = 1024;
constexpr int kMaxDepth = 64;

std::string child(const std::string& path, const std::string& key) {
  return path + "/" + key;
}

ByteSet range(uint8_t lo, uint8_t hi) {
  return ByteSet{}.add_range(lo, hi);
}

}  // namespace

JsonSchemaCompiler::JsonSchemaCompiler(GrammarBuilder& b) : b_(b) {}

Status JsonSchemaCompiler::error(const std::string& path, const std::string& what) const {
  return invalid_argument(
      where_ + ": " + what + " at " + path +
      " cannot be enforced on the output; change the schema (supported: " + kSupportedList + ")");
}

Sym JsonSchemaCompiler::ws() {
  if (ws_.arg >= 0) return ws_;
  const Sym indent = b_.repeat("indent", b_.bytes(ByteSet{}.add(' ').add('\t')), 0, 20);
  ws_ = b_.rule("ws", {{}, {b_.byte(' ')}, {b_.byte('\n'), indent}});
  return ws_;
}

Sym JsonSchemaCompiler::character() {
  if (char_.arg >= 0) return char_;
  const Sym cont = b_.bytes(range(0x80, 0xBF));
  const Sym hex = b_.bytes(range('0', '9').add_range('a', 'f').add_range('A', 'F'));
  // No surrogate escapes (\uD800-\uDFFF): lone ones are not text, and a pair would count as two
  // characters against minLength while it decodes to one.
  const Sym hex_no_d = b_.bytes(
      range('0', '9').add_range('a', 'c').add_range('A', 'C').add('e').add('f').add('E').add('F'));
  const Sym d = b_.bytes(ByteSet{}.add('d').add('D'));
  const Sym escape = b_.rule(
      "escape",
      {{b_.bytes(
           ByteSet{}.add('"').add('\\').add('/').add('b').add('f').add('n').add('r').add('t'))},
       {b_.byte('u'), hex_no_d, hex, hex, hex},
       {b_.byte('u'), d, b_.bytes(range('0', '7')), hex, hex}});
  ByteSet ascii = range(0x20, 0x7F);
  ascii.w['"' >> 6] &= ~(uint64_t{1} << ('"' & 63));
  ascii.w['\\' >> 6] &= ~(uint64_t{1} << ('\\' & 63));
  // Well-formed UTF-8 only (no overlongs, no surrogates, nothing above U+10FFFF).
  char_ = b_.rule("char", {{b_.bytes(ascii)},
                           {b_.byte('\\'), escape},
                           {b_.bytes(range(0xC2, 0xDF)), cont},
                           {b_.byte(0xE0), b_.bytes(range(0xA0, 0xBF)), cont},
                           {b_.bytes(range(0xE1, 0xEC).add(0xEE).add(0xEF)), cont, cont},
                           {b_.byte(0xED), b_.bytes(range(0x80, 0x9F)), cont},
                           {b_.byte(0xF0), b_.bytes(range(0x90, 0xBF)), cont, cont},
                           {b_.bytes(range(0xF1, 0xF3)), cont, cont, cont},
                           {b_.byte(0xF4), b_.bytes(range(0x80, 0x8F)), cont, cont}});
  return char_;
}

Sym JsonSchemaCompiler::string_chars(int64_t min, int64_t max) {
  const auto key = std::make_pair(min, max);
  if (auto it = strings_.find(key); it != strings_.end()) return it->second;
  const std::string name =
      "string" + (min == 0 && max < 0 ? std::string() : "_" + std::to_string(counter_++));
  const Sym chars = b_.repeat(name + "_chars", character(), min, max);
  const Sym s = b_.rule(name, {cat({one(b_.byte('"')), one(chars), one(b_.byte('"'))})});
  strings_.emplace(key, s);
  return s;
}

Sym JsonSchemaCompiler::number(bool integer) {
  Sym& memo = integer ? integer_ : number_;
  if (memo.arg >= 0) return memo;
  if (integer_.arg < 0) {
    const Sym digit = b_.bytes(range('0', '9'));
    const Sym int_part = b_.rule(
        "int_part",
        {{b_.byte('0')}, {b_.bytes(range('1', '9')), b_.repeat("int_digits", digit, 0, 15)}});
    integer_ = b_.rule("integer", {{int_part}, {b_.byte('-'), int_part}});
  }
  if (!integer) {
    const Sym digit = b_.bytes(range('0', '9'));
    const Sym frac = b_.rule("frac", {{b_.byte('.'), b_.repeat("frac_digits", digit, 1, 16)}});
    const Sym sign = b_.rule("exp_sign", {{}, {b_.bytes(ByteSet{}.add('+').add('-'))}});
    const Sym exp = b_.rule("exp", {{b_.bytes(ByteSet{}.add('e').add('E')), sign,
                                     b_.repeat("exp_digits", digit, 1, 3)}});
    number_ = b_.rule(
        "number", {{integer_, b_.rule("frac_opt", {{}, {frac}}), b_.rule("exp_opt", {{}, {exp}})}});
  }
  return memo;
}

Sym JsonSchemaCompiler::any_value() {
  if (any_.arg >= 0) return any_;
  const int32_t value = b_.declare("value");
  any_ = b_.ref(value);
  const Sym w = ws();
  const Sym str = string_chars(0, -1);
  const Sym kv = b_.rule("member", {{str, w, b_.byte(':'), w, any_, w}});
  const Sym more_kv = b_.repeat("members", b_.rule("comma_member", {{b_.byte(','), w, kv}}), 0, -1);
  any_object_ = b_.rule(
      "object",
      {{b_.byte('{'), w, b_.rule("object_body", {{b_.byte('}')}, {kv, more_kv, b_.byte('}')}})}});
  const Sym item = b_.rule("item", {{any_, w}});
  const Sym more = b_.repeat("items", b_.rule("comma_item", {{b_.byte(','), w, item}}), 0, -1);
  const Sym array = b_.rule(
      "array",
      {{b_.byte('['), w, b_.rule("array_body", {{b_.byte(']')}, {item, more, b_.byte(']')}})}});
  b_.add_alt(value, {any_object_});
  b_.add_alt(value, {array});
  b_.add_alt(value, {str});
  b_.add_alt(value, {number(false)});
  b_.add_alt(value, b_.literal("true"));
  b_.add_alt(value, b_.literal("false"));
  b_.add_alt(value, b_.literal("null"));
  return any_;
}

Sym JsonSchemaCompiler::any_object() {
  any_value();
  return any_object_;
}

Sym JsonSchemaCompiler::literal_value(const ordered_json& v) {
  return b_.rule("literal", {b_.literal(v.dump())});
}

Result<Sym> JsonSchemaCompiler::value(const ordered_json& schema, const std::string& where) {
  root_ = &schema;
  where_ = where;
  refs_.clear();
  return compile(schema, "#");
}

Result<Sym> JsonSchemaCompiler::compile_ref(const std::string& ref, const std::string& path) {
  if (auto it = refs_.find(ref); it != refs_.end()) return b_.ref(it->second);
  if (ref.empty() || ref[0] != '#') {
    return error(path, "'$ref' to \"" + ref + "\" (only references inside the schema, \"#...\")");
  }
  const ordered_json* target = root_;
  if (ref.size() > 1) {
    try {
      const ordered_json::json_pointer ptr(ref.substr(1));
      if (!root_->contains(ptr)) return error(path, "'$ref' to \"" + ref + "\", which is missing,");
      target = &(*root_)[ptr];
    } catch (const nlohmann::json::exception&) {
      return error(path, "'$ref' \"" + ref + "\", which is not a JSON pointer,");
    }
  }
  // Declared before compiling the target, so that the target may refer to itself.
  const int32_t rule = b_.declare("ref_" + std::to_string(refs_.size()));
  refs_.emplace(ref, rule);
  ARC_ASSIGN_OR_RETURN(Sym body, compile(*target, ref));
  b_.add_alt(rule, {body});
  return b_.ref(rule);
}

Result<Sym> JsonSchemaCompiler::compile(const ordered_json& s, const std::string& path) {
  if (std::count(path.begin(), path.end(), '/') > kMaxDepth) {
    return error(path, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  if (s.is_boolean()) {
    if (s.get<bool>()) return any_value();
    return error(path, "the schema false (no document is valid)");
  }
  if (!s.is_object()) return error(path, "a schema that is not an object");
  bool constrains = false;
  for (const auto& item : s.items()) {
    const std::string& key = item.key();
    if (kAnnotations.count(key) != 0) continue;
    if (kSupported.count(key) == 0) return error(path, "keyword '" + key + "'");
    constrains = true;
  }
  if (!constrains) return any_value();

  auto only = [&](const char* kw) -> Status {
    for (const auto& item : s.items()) {
      const std::string& key = item.key();
      if (key != kw && kSupported.count(key) != 0 && key != "nullable") {
        return error(path, "'" + std::string(kw) + "' beside '" + key + "'");
      }
    }
    return ok_status();
  };
  const bool nullable =
      s.contains("nullable") && s["nullable"].is_boolean() && s["nullable"].get<bool>();
  auto with_null = [&](Sym x) {
    return nullable ? b_.rule("nullable", {{x}, b_.literal("null")}) : x;
  };
  if (s.contains("$ref")) {
    ARC_RETURN_IF_ERROR(only("$ref"));
    if (!s["$ref"].is_string()) return error(path, "'$ref' that is not a string");
    ARC_ASSIGN_OR_RETURN(Sym r, compile_ref(s["$ref"].get<std::string>(), path));
    return with_null(r);
  }
  if (s.contains("const")) {
    ARC_RETURN_IF_ERROR(only("const"));
    return with_null(literal_value(s["const"]));
  }
  if (s.contains("enum")) {
    // Other keywords beside enum would have to hold for every value: refused rather than
    // trusted.
    ARC_RETURN_IF_ERROR(only("enum"));
    const ordered_json& e = s["enum"];
    if (!e.is_array() || e.empty()) return error(path, "'enum' that is not a non-empty array");
    std::vector<Seq> alts;
    for (const auto& v : e) alts.push_back(b_.literal(v.dump()));
    if (nullable) alts.push_back(b_.literal("null"));
    return b_.rule("enum", std::move(alts));
  }
  for (const char* kw : {"anyOf", "allOf"}) {
    if (!s.contains(kw)) continue;
    ARC_RETURN_IF_ERROR(only(kw));
    const ordered_json& list = s[kw];
    if (!list.is_array() || list.empty()) {
      return error(path, "'" + std::string(kw) + "' that is not a non-empty array");
    }
    if (std::string(kw) == "allOf") {
      if (list.size() != 1) return error(path, "'allOf' with more than one schema");
      ARC_ASSIGN_OR_RETURN(Sym x, compile(list[0], child(path, "allOf/0")));
      return with_null(x);
    }
    std::vector<Seq> alts;
    for (size_t i = 0; i < list.size(); ++i) {
      ARC_ASSIGN_OR_RETURN(Sym x, compile(list[i], child(path, "anyOf/" + std::to_string(i))));
      alts.push_back({x});
    }
    if (nullable) alts.push_back(b_.literal("null"));
    return b_.rule("any_of", std::move(alts));
  }

  std::vector<std::string> types;
  if (s.contains("type")) {
    const ordered_json& t = s["type"];
    if (t.is_string()) {
      types.push_back(t.get<std::string>());
    } else if (t.is_array() && !t.empty()) {
      for (const auto& x : t) {
        if (!x.is_string()) return error(path, "'type' with an entry that is not a string");
        types.push_back(x.get<std::string>());
      }
    } else {
      return error(path, "'type' that is neither a string nor a list of strings");
    }
  } else if (s.contains("properties") || s.contains("required") ||
             s.contains("additionalProperties")) {
    types.push_back("object");
  } else if (s.contains("items") || s.contains("minItems") || s.contains("maxItems")) {
    types.push_back("array");
  } else if (s.contains("minLength") || s.contains("maxLength") || s.contains("format")) {
    types.push_back("string");
  } else {
    return with_null(any_value());
  }
  if (nullable) types.push_back("null");
  std::vector<Seq> alts;
  for (const std::string& t : types) {
    if (t == "object") {
      ARC_ASSIGN_OR_RETURN(Sym x, compile_object(s, path));
      alts.push_back({x});
    } else if (t == "array") {
      ARC_ASSIGN_OR_RETURN(Sym x, compile_array(s, path));
      alts.push_back({x});
    } else if (t == "string") {
      ARC_ASSIGN_OR_RETURN(Sym x, compile_string(s, path));
      alts.push_back({x});
    } else if (t == "number" || t == "integer") {
      alts.push_back({number(t == "integer")});
    } else if (t == "boolean") {
      alts.push_back(b_.literal("true"));
      alts.push_back(b_.literal("false"));
    } else if (t == "null") {
      alts.push_back(b_.literal("null"));
    } else {
      return error(path, "'type' \"" + t + "\"");
    }
  }
  if (alts.size() == 1 && alts[0].size() == 1) return alts[0][0];
  return b_.rule("types", std::move(alts));
}

namespace {

// A non-negative count keyword, or `fallback` when absent.
Result<int64_t> count_keyword(const ordered_json& s, const char* kw, int64_t fallback) {
  if (!s.contains(kw)) return fallback;
  const ordered_json& v = s[kw];
  if (!v.is_number_integer() || v.get<int64_t>() < 0) {
    return invalid_argument(std::string("'") + kw + "' must be a non-negative integer");
  }
  return v.get<int64_t>();
}

}  // namespace

Result<Sym> JsonSchemaCompiler::compile_object(const ordered_json& s, const std::string& path) {
  static const ordered_json kEmpty = ordered_json::object();
  const ordered_json& props = s.contains("properties") ? s["properties"] : kEmpty;
  if (!props.is_object()) return error(path, "'properties' that is not an object");
  std::set<std::string> required;
  if (s.contains("required")) {
    if (!s["required"].is_array()) return error(path, "'required' that is not a list");
    for (const auto& r : s["required"]) {
      if (!r.is_string()) return error(path, "'required' with an entry that is not a string");
      if (!props.contains(r.get<std::string>())) {
        return error(path, "'required' property \"" + r.get<std::string>() +
                               "\" that 'properties' does not define");
      }
      required.insert(r.get<std::string>());
    }
  }
  bool closed = props.size() > 0;
  if (s.contains("additionalProperties")) {
    const ordered_json& ap = s["additionalProperties"];
    if (ap.is_boolean()) {
      closed = closed || !ap.get<bool>();
    } else if (!(ap.is_object() && ap.empty())) {
      return error(path, "'additionalProperties' with a schema (only false)");
    }
  }
  // Without properties and not closed: any object.
  if (!closed) return any_object();
  const Sym w = ws();
  // rest[i][after]: the properties from i on; after: one was written, so a comma comes first.
  // Properties are written in declaration order; the optional ones may be left out.
  const size_t n = props.size();
  std::vector<std::array<Sym, 2>> rest(n + 1);
  rest[n][0] = b_.rule("props_end", {{}});
  rest[n][1] = rest[n][0];
  std::vector<std::pair<std::string, const ordered_json*>> list;
  for (const auto& item : props.items()) list.emplace_back(item.key(), &item.value());
  for (size_t i = n; i-- > 0;) {
    const std::string& name = list[i].first;
    ARC_ASSIGN_OR_RETURN(Sym value, compile(*list[i].second, child(path, "properties/" + name)));
    Seq kv = b_.literal(ordered_json(name).dump());
    kv.insert(kv.end(), {w, b_.byte(':'), w, value, w});
    const Sym member = b_.rule("prop_" + name, {kv});
    const bool req = required.count(name) != 0;
    std::vector<Seq> first{{member, rest[i + 1][1]}};
    std::vector<Seq> after{{b_.byte(','), w, member, rest[i + 1][1]}};
    if (!req) {
      first.push_back({rest[i + 1][0]});
      after.push_back({rest[i + 1][1]});
    }
    rest[i][0] = b_.rule("props_" + std::to_string(i), std::move(first));
    rest[i][1] = b_.rule("props_" + std::to_string(i) + "_next", std::move(after));
  }
  return b_.rule("object_" + std::to_string(counter_++),
                 {{b_.byte('{'), w, rest[0][0], b_.byte('}')}});
}

Result<Sym> JsonSchemaCompiler::compile_array(const ordered_json& s, const std::string& path) {
  auto min = count_keyword(s, "minItems", 0);
  if (!min.ok()) return error(path, min.status().message());
  auto max = count_keyword(s, "maxItems", -1);
  if (!max.ok()) return error(path, max.status().message());
  if (*max >= 0 && *max < *min) return error(path, "'maxItems' below 'minItems'");
  if (*min > kMaxCount || *max > kMaxCount) {
    return error(path, "'minItems'/'maxItems' above " + std::to_string(kMaxCount));
  }
  Sym item_schema = any_value();
  if (s.contains("items")) {
    if (s["items"].is_array()) return error(path, "'items' as a list (tuple form)");
    ARC_ASSIGN_OR_RETURN(item_schema, compile(s["items"], child(path, "items")));
  }
  const Sym w = ws();
  const std::string name = "array_" + std::to_string(counter_++);
  const Sym item = b_.rule(name + "_item", {{item_schema, w}});
  const Sym comma_item = b_.rule(name + "_next", {{b_.byte(','), w, item}});
  std::vector<Seq> body;
  if (*max == 0) {
    body.push_back({b_.byte(']')});
  } else {
    const Sym more = b_.repeat(name + "_more", comma_item, std::max<int64_t>(*min - 1, 0),
                               *max < 0 ? -1 : *max - 1);
    if (*min == 0) body.push_back({b_.byte(']')});
    body.push_back({item, more, b_.byte(']')});
  }
  return b_.rule(name, {{b_.byte('['), w, b_.rule(name + "_body", std::move(body))}});
}

Result<Sym> JsonSchemaCompiler::compile_string(const ordered_json& s, const std::string& path) {
  auto min = count_keyword(s, "minLength", 0);
  if (!min.ok()) return error(path, min.status().message());
  auto max = count_keyword(s, "maxLength", -1);
  if (!max.ok()) return error(path, max.status().message());
  if (*max >= 0 && *max < *min) return error(path, "'maxLength' below 'minLength'");
  if (*min > kMaxCount || *max > kMaxCount) {
    return error(path, "'minLength'/'maxLength' above " + std::to_string(kMaxCount));
  }
  if (!s.contains("format")) return string_chars(*min, *max);
  if (!s["format"].is_string()) return error(path, "'format' that is not a string");
  const std::string format = s["format"].get<std::string>();
  if (s.contains("minLength") || s.contains("maxLength")) {
    return error(path, "'format' beside 'minLength'/'maxLength'");
  }
  const Sym digit = b_.bytes(range('0', '9'));
  const Sym hex = b_.bytes(range('0', '9').add_range('a', 'f').add_range('A', 'F'));
  auto times = [](Sym x, int n) { return Seq(static_cast<size_t>(n), x); };
  auto date = [&] {
    // Only dates that exist: years 0001-9999, each month's days (February to the 28th, as
    // the 29th exists only in leap years).
    const Sym d19 = b_.bytes(range('1', '9'));
    const Sym year = b_.rule("year", {{d19, digit, digit, digit},
                                      {b_.byte('0'), d19, digit, digit},
                                      {b_.byte('0'), b_.byte('0'), d19, digit},
                                      {b_.byte('0'), b_.byte('0'), b_.byte('0'), d19}});
    const Sym day28 = b_.rule(
        "day28",
        {{b_.byte('0'), d19}, {b_.byte('1'), digit}, {b_.byte('2'), b_.bytes(range('0', '8'))}});
    const Sym day30 = b_.rule("day30", {{day28}, {b_.byte('2'), b_.byte('9')}, {b_.literal("30")}});
    const Sym day31 = b_.rule("day31", {{day30}, {b_.literal("31")}});
    std::vector<Seq> month_day;
    for (const char* m : {"01", "03", "05", "07", "08", "10", "12"}) {
      month_day.push_back(cat({b_.literal(m), one(b_.byte('-')), one(day31)}));
    }
    for (const char* m : {"04", "06", "09", "11"}) {
      month_day.push_back(cat({b_.literal(m), one(b_.byte('-')), one(day30)}));
    }
    month_day.push_back(cat({b_.literal("02-"), one(day28)}));
    return b_.rule("date", {{year, b_.byte('-'), b_.rule("month_day", std::move(month_day))}});
  };
  auto time = [&] {
    const Sym hour = b_.rule(
        "hour", {{b_.bytes(range('0', '1')), digit}, {b_.byte('2'), b_.bytes(range('0', '3'))}});
    const Sym sixty = b_.rule("minute", {{b_.bytes(range('0', '5')), digit}});
    const Sym frac =
        b_.rule("time_frac", {{}, {b_.byte('.'), b_.repeat("time_frac_digits", digit, 1, 6)}});
    const Sym offset = b_.rule(
        "time_offset",
        {{b_.byte('Z')}, {b_.bytes(ByteSet{}.add('+').add('-')), hour, b_.byte(':'), sixty}});
    return b_.rule("time", {{hour, b_.byte(':'), sixty, b_.byte(':'), sixty, frac, offset}});
  };
  Seq body;
  if (format == "date") {
    body = {date()};
  } else if (format == "time") {
    body = {time()};
  } else if (format == "date-time") {
    body = {date(), b_.byte('T'), time()};
  } else if (format == "uuid") {
    body = cat({times(hex, 8), one(b_.byte('-')), times(hex, 4), one(b_.byte('-')), times(hex, 4),
                one(b_.byte('-')), times(hex, 4), one(b_.byte('-')), times(hex, 12)});
  } else {
    return error(path, "'format' \"" + format + "\"");
  }
  return b_.rule("format_" + format, {cat({one(b_.byte('"')), body, one(b_.byte('"'))})});
}

Result<Grammar> json_schema_grammar(const ordered_json& schema, const std::string& where) {
  GrammarBuilder b;
  JsonSchemaCompiler c(b);
  ARC_ASSIGN_OR_RETURN(Sym v, c.value(schema, where));
  const Sym root = b.rule("root", {{v}});
  return std::move(b).build(root.arg);
}

Grammar json_any_grammar(bool object_only) {
  GrammarBuilder b;
  JsonSchemaCompiler c(b);
  const Sym v = object_only ? c.any_object() : c.any_value();
  const Sym root = b.rule("root", {{v}});
  return std::move(b).build(root.arg);
}

}  // namespace arc::grammar
