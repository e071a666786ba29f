#include "sched/tool_call_grammar.h"

#include <algorithm>

#include "arc/log.h"
#include "chat/xml_tool_calls.h"

namespace arc {

namespace {

using grammar::GrammarBuilder;
using grammar::Seq;
using grammar::Sym;
using nlohmann::ordered_json;

// How an XML-style syntax writes one argument: prefix + KEY + middle, then the value, then suffix.
struct XmlArgStyle {
  std::string prefix, middle, suffix;
};

XmlArgStyle xml_style(OutputSyntax syntax) {
  switch (syntax) {
    case OutputSyntax::kGlm45:
      return {"<arg_key>", "</arg_key>\n<arg_value>", "</arg_value>\n"};
    case OutputSyntax::kQwen3Coder:
      return {"<parameter=", ">\n", "\n</parameter>\n"};
    default:  // MiniMax-M2
      return {"<parameter name=\"", "\">", "</parameter>\n"};
  }
}

// One character of a bounded text value: UTF-8, no '<' (where the closing markup starts) and
// no control bytes but tab and newline.
Sym text_char(GrammarBuilder& b) {
  grammar::ByteSet ascii;
  ascii.add_range(0x20, 0x7e).add('\n').add('\t');
  ascii.w['<' >> 6] &= ~(uint64_t{1} << ('<' & 63));
  grammar::ByteSet cont;
  cont.add_range(0x80, 0xbf);
  const Sym c = b.bytes(cont);
  return b.rule("text_char", {{b.bytes(ascii)},
                              {b.bytes(grammar::ByteSet{}.add_range(0xc2, 0xdf)), c},
                              {b.bytes(grammar::ByteSet{}.add_range(0xe0, 0xef)), c, c},
                              {b.bytes(grammar::ByteSet{}.add_range(0xf0, 0xf4)), c, c, c}});
}

// A string value as bare text. With a length bound (minLength/maxLength, up to 256 characters)
// the characters are counted and may not hold '<'; unbounded text runs up to the closing markup.
Seq text_value(GrammarBuilder& b, const ordered_json& schema, const std::string& key,
               const XmlArgStyle& st) {
  auto bound = [&](const char* k, int64_t dflt) {
    return schema.is_object() && schema.contains(k) && schema[k].is_number_integer()
               ? schema[k].get<int64_t>()
               : dflt;
  };
  const int64_t min = std::max<int64_t>(0, bound("minLength", 0));
  const int64_t max = bound("maxLength", -1);
  constexpr int64_t kMaxCounted = 256;
  if ((max < 0 && min == 0) || max > kMaxCounted || min > kMaxCounted) {
    return grammar::one(b.until("text_" + key, st.suffix));
  }
  return grammar::cat(
      {grammar::one(b.repeat("text_" + key, text_char(b), min, max)), b.literal(st.suffix)});
}

// The value of one parameter: text up to the closing markup for strings (the markup cannot occur
// inside), the enum's words for a string enum, JSON of the schema otherwise.
Result<Seq> xml_value(GrammarBuilder& b, grammar::JsonSchemaCompiler& jc,
                      const OutputConstraint::Tool& t, const std::string& key,
                      const ordered_json& schema, const XmlArgStyle& st) {
  const std::string where = "tools[\"" + t.name + "\"].parameters." + key;
  if (schema.is_object() && schema.contains("enum") && schema["enum"].is_array() &&
      !schema["enum"].empty() && chat::schema_value_is_text(&schema)) {
    std::vector<Seq> words;
    for (const auto& v : schema["enum"]) {
      if (v.is_string()) words.push_back(b.literal(v.get<std::string>() + st.suffix));
    }
    return grammar::one(b.rule("enum_" + key, std::move(words)));
  }
  if (chat::schema_value_is_text(&schema)) return text_value(b, schema, key, st);
  auto compiled = jc.value(schema, where);
  if (!compiled.ok()) {
    if (t.strict) return compiled.status();
    logger("engine")->info("{}: constrained to any text ({})", where, compiled.status().message());
    return grammar::one(b.until("text_" + key, st.suffix));
  }
  return grammar::cat({grammar::one(*compiled), b.literal(st.suffix)});
}

// The arguments of one tool: declared parameters in their order, required ones always, the others
// optional. A tool that declares no properties at all takes any keys (names of up to 64 word
// characters) with text values, unless it is strict (then none).
Result<Seq> xml_arguments(GrammarBuilder& b, grammar::JsonSchemaCompiler& jc,
                          const OutputConstraint::Tool& t, const XmlArgStyle& st) {
  const ordered_json& p = t.parameters;
  if (!p.is_object() || !p.contains("properties") || !p["properties"].is_object()) {
    if (t.strict) return Seq{};
    grammar::ByteSet word;
    word.add_range('a', 'z').add_range('A', 'Z').add_range('0', '9').add('_').add('-').add('.');
    Sym key = b.repeat("any_key", b.bytes(word), 1, 64);
    Sym pair = b.rule("any_arg",
                      {grammar::cat({b.literal(st.prefix), grammar::one(key), b.literal(st.middle),
                                     grammar::one(b.until("any_value", st.suffix))})});
    return grammar::one(b.repeat("any_args", pair, 0, 32));
  }
  std::vector<std::string> required;
  if (p.contains("required") && p["required"].is_array()) {
    for (const auto& r : p["required"]) {
      if (r.is_string()) required.push_back(r.get<std::string>());
    }
  }
  Seq args;
  for (const auto& [key, schema] : p["properties"].items()) {
    ARC_ASSIGN_OR_RETURN(Seq value, xml_value(b, jc, t, key, schema, st));
    Seq one_arg = grammar::cat({b.literal(st.prefix + key + st.middle), value});
    const bool must = std::find(required.begin(), required.end(), key) != required.end();
    if (must) {
      args.insert(args.end(), one_arg.begin(), one_arg.end());
    } else {
      args.push_back(b.repeat("opt_" + key, b.rule("arg_" + key, {one_arg}), 0, 1));
    }
  }
  return args;
}

Result<Seq> one_tool(GrammarBuilder& b, grammar::JsonSchemaCompiler& jc,
                     const OutputConstraint::Tool& t, OutputSyntax syntax,
                     const std::string& open) {
  switch (syntax) {
    case OutputSyntax::kGlm45: {
      ARC_ASSIGN_OR_RETURN(Seq args, xml_arguments(b, jc, t, xml_style(syntax)));
      return grammar::cat({b.literal(open + t.name + "\n"), args, b.literal("</tool_call>")});
    }
    case OutputSyntax::kQwen3Coder: {
      ARC_ASSIGN_OR_RETURN(Seq args, xml_arguments(b, jc, t, xml_style(syntax)));
      return grammar::cat({b.literal(open + "\n<function=" + t.name + ">\n"), args,
                           b.literal("</function>\n</tool_call>")});
    }
    case OutputSyntax::kMiniMaxM2: {
      ARC_ASSIGN_OR_RETURN(Seq args, xml_arguments(b, jc, t, xml_style(syntax)));
      return grammar::cat({b.literal(open + "\n<invoke name=\"" + t.name + "\">\n"), args,
                           b.literal("</invoke>\n</minimax:tool_call>")});
    }
    default:
      break;
  }
  Sym args = jc.any_object();
  if (!t.parameters.is_null() && !t.parameters.empty()) {
    auto compiled = jc.value(t.parameters, "tools[\"" + t.name + "\"].parameters");
    if (compiled.ok()) {
      args = *compiled;
    } else if (t.strict) {
      return compiled.status();
    } else {
      logger("engine")->info("tool {}: arguments constrained to any JSON object ({})", t.name,
                             compiled.status().message());
    }
  }
  const std::string name = ordered_json(t.name).dump();
  if (syntax == OutputSyntax::kQwen) {
    return grammar::cat({b.literal(open + "\n{\"name\": " + name + ", \"arguments\": "),
                         grammar::one(args), b.literal("}\n</tool_call>")});
  }
  if (syntax == OutputSyntax::kGptOss) {
    // The arguments end the output: <|call|> is a stop token, allowed once they are complete.
    return grammar::cat({b.literal("<|channel|>commentary to=functions." + t.name +
                                   " <|constrain|>json<|message|>"),
                         grammar::one(args)});
  }
  return grammar::cat(
      {b.literal("{\"name\": " + name + ", \"parameters\": "), grammar::one(args), b.literal("}")});
}

}  // namespace

bool tool_call_grammar_supported(OutputSyntax syntax) {
  switch (syntax) {
    case OutputSyntax::kQwen:
    case OutputSyntax::kLlama3:
    case OutputSyntax::kGlm45:
    case OutputSyntax::kQwen3Coder:
    case OutputSyntax::kMiniMaxM2:
    case OutputSyntax::kGptOss:
      return true;
    default:
      return false;
  }
}

std::string tool_call_marker(OutputSyntax syntax) {
  switch (syntax) {
    case OutputSyntax::kQwen:
    case OutputSyntax::kGlm45:
    case OutputSyntax::kQwen3Coder:
      return "<tool_call>";
    case OutputSyntax::kMiniMaxM2:
      return "<minimax:tool_call>";
    default:
      return "";
  }
}

Result<Sym> tool_call_grammar(GrammarBuilder& b, grammar::JsonSchemaCompiler& jc,
                              const OutputConstraint& c, OutputSyntax syntax, bool after_marker) {
  const std::string open = after_marker ? "" : tool_call_marker(syntax);
  std::vector<Seq> calls;
  for (const OutputConstraint::Tool& t : c.tools) {
    ARC_ASSIGN_OR_RETURN(Seq call, one_tool(b, jc, t, syntax, open));
    calls.push_back(std::move(call));
  }
  // gpt-oss: a forced call comes at once, without an analysis message first: a reasoning block
  // in the grammar would let a weak model reason until max_tokens and never call.
  return b.rule("tool_call", std::move(calls));
}

}  // namespace arc
