// JSON Schema (the subset OpenAI's strict mode accepts, and a little more) compiled to a byte
// grammar whose documents are exactly the compact-or-lightly-spaced JSON texts that validate.
//
// Supported: type (one or a list, "null" included) and nullable; object with properties,
// required (absent ones are optional, in declaration order) and additionalProperties false
// (absent or true is compiled as false: the output still validates, it only never invents
// keys); array with items, minItems, maxItems; string with minLength, maxLength and the formats
// date, time, date-time and uuid; number; integer; boolean; enum; const; anyOf; allOf of a single
// schema; $ref to "#", "#/$defs/..." or "#/definitions/..." (any JSON pointer into the root
// schema), recursion included. Annotations (title, description, default, examples, $comment,
// ...) are ignored. Any other keyword is refused with an error that names it and where it is.
//
// Whitespace between tokens is bounded (nothing, one space, or a newline and at most 20 spaces
// or tabs), numbers have at most 16 integer and 16 fraction digits and 3 exponent digits, and
// \u escapes never encode surrogates: a constrained model can neither pad forever nor produce
// text a strict parser rejects.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "arc/status.h"
#include "grammar/grammar.h"

namespace arc::grammar {

// Compiles schemas into rules of one GrammarBuilder, so that several schemas (a tool call per
// tool) can share one grammar with surrounding literal text.
class JsonSchemaCompiler {
 public:
  explicit JsonSchemaCompiler(GrammarBuilder& b);

  // A value valid against `schema`; `root` is what "#" refers to in its $refs (usually the
  // schema itself). `where` names the schema in errors ("response_format.json_schema.schema").
  Result<Sym> value(const nlohmann::ordered_json& schema, const std::string& where);

  Sym any_value();   // any JSON value
  Sym any_object();  // any JSON object
  Sym ws();          // the bounded whitespace between tokens

 private:
  Result<Sym> compile(const nlohmann::ordered_json& s, const std::string& path);
  Result<Sym> compile_ref(const std::string& ref, const std::string& path);
  Result<Sym> compile_object(const nlohmann::ordered_json& s, const std::string& path);
  Result<Sym> compile_array(const nlohmann::ordered_json& s, const std::string& path);
  Result<Sym> compile_string(const nlohmann::ordered_json& s, const std::string& path);
  Sym literal_value(const nlohmann::ordered_json& v);
  Sym string_chars(int64_t min, int64_t max);
  Sym character();
  Sym number(bool integer);
  Status error(const std::string& path, const std::string& what) const;

  GrammarBuilder& b_;
  const nlohmann::ordered_json* root_ = nullptr;
  std::string where_;
  std::map<std::string, int32_t> refs_;  // JSON pointer -> rule (declared before compiled)
  std::map<std::pair<int64_t, int64_t>, Sym> strings_;  // (min, max) -> string rule
  Sym ws_{ElemKind::kEnd, -1}, char_{ElemKind::kEnd, -1}, any_{ElemKind::kEnd, -1};
  Sym any_object_{ElemKind::kEnd, -1}, number_{ElemKind::kEnd, -1}, integer_{ElemKind::kEnd, -1};
  Sym any_string_{ElemKind::kEnd, -1};
  int counter_ = 0;
};

// A whole document that validates against `schema`.
Result<Grammar> json_schema_grammar(const nlohmann::ordered_json& schema,
                                    const std::string& where = "schema");
// Any JSON document (json_object mode: object_only).
Grammar json_any_grammar(bool object_only);

}  // namespace arc::grammar
