#include "sched/output_constraint.h"

#include "arc/log.h"
#include "grammar/json_schema.h"
#include "grammar/tokenizer_vocab.h"
#include "sched/engine_service_impl.h"

namespace arc {

namespace {

using grammar::GrammarBuilder;
using grammar::Sym;
using nlohmann::ordered_json;

constexpr const char* kQwenCallMarker = "<tool_call>";
// Compiled grammars kept per model; past this many the cache starts again.
constexpr size_t kMaxCachedMaskers = 32;

std::string cache_key(const OutputConstraint& c, const ConstraintOptions& o) {
  ordered_json k = {{"kind", static_cast<int>(c.kind)},
                    {"syntax", static_cast<int>(o.syntax)},
                    {"reasoning", o.starts_in_reasoning},
                    {"optional", c.optional},
                    {"schema", c.schema}};
  for (const auto& t : c.tools) k["tools"].push_back({t.name, t.parameters, t.strict});
  return k.dump();
}

// The call of one of the tools, in the family's syntax (as its chat template writes calls);
// after_marker: without the marker that opens a Qwen call (free text matched it).
Result<Sym> tool_call(GrammarBuilder& b, grammar::JsonSchemaCompiler& jc, const OutputConstraint& c,
                      OutputSyntax syntax, bool after_marker) {
  std::vector<grammar::Seq> calls;
  for (const OutputConstraint::Tool& t : c.tools) {
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
      calls.push_back(grammar::cat({b.literal(std::string(after_marker ? "" : kQwenCallMarker) +
                                              "\n{\"name\": " + name + ", \"arguments\": "),
                                    grammar::one(args), b.literal("}\n</tool_call>")}));
    } else {
      calls.push_back(grammar::cat({b.literal("{\"name\": " + name + ", \"parameters\": "),
                                    grammar::one(args), b.literal("}")}));
    }
  }
  return b.rule("tool_call", std::move(calls));
}

}  // namespace

Result<std::shared_ptr<grammar::TokenMasker>> constraint_masker(LoadedModel& l,
                                                                const OutputConstraint& c,
                                                                const ConstraintOptions& o) {
  if (c.kind == OutputConstraint::Kind::kNone) return std::shared_ptr<grammar::TokenMasker>();
  if (c.kind == OutputConstraint::Kind::kToolCall && c.optional &&
      o.syntax != OutputSyntax::kQwen) {
    // A Llama 3 call is a bare JSON reply: no marker tells it from text.
    logger("engine")->info(
        "strict tools with tool_choice auto are constrained for Qwen-style "
        "calls only; this model's calls are not constrained");
    return std::shared_ptr<grammar::TokenMasker>();
  }
  if (c.kind == OutputConstraint::Kind::kToolCall && o.syntax != OutputSyntax::kQwen &&
      o.syntax != OutputSyntax::kLlama3) {
    logger("engine")->warn(
        "tool_choice forces a call, but this model's tool-call syntax has no grammar yet; the "
        "call is not constrained");
    return std::shared_ptr<grammar::TokenMasker>();
  }
  const std::string key = cache_key(c, o);
  std::lock_guard<std::mutex> lock(l.grammar_mu);
  if (auto it = l.maskers.find(key); it != l.maskers.end()) return it->second;

  GrammarBuilder b;
  grammar::JsonSchemaCompiler jc(b);
  Sym body;
  switch (c.kind) {
    case OutputConstraint::Kind::kJsonObject:
      body = jc.any_object();
      break;
    case OutputConstraint::Kind::kJsonSchema: {
      ARC_ASSIGN_OR_RETURN(body, jc.value(c.schema, c.where));
      break;
    }
    default: {
      ARC_ASSIGN_OR_RETURN(body, tool_call(b, jc, c, o.syntax, c.optional));
      if (c.optional) {
        // Free text (reasoning included) in which the marker opens a constrained call.
        body = b.until("text", kQwenCallMarker, {body}, /*free_text=*/true);
      }
      break;
    }
  }
  grammar::Seq root;
  if (o.starts_in_reasoning) {
    // The reasoning the template opened, then the document.
    root.push_back(b.until("reasoning", "</think>"));
    root.push_back(
        b.repeat("after_reasoning", b.bytes(grammar::ByteSet{}.add('\n').add(' ')), 0, 4));
  }
  root.push_back(body);
  const Sym r = b.rule("root", {root});
  auto g = std::make_shared<const grammar::Grammar>(std::move(b).build(r.arg));
  {
    grammar::Matcher m(g);
    if (!m.can_continue() && !m.complete()) {
      return invalid_argument(c.where + ": the schema admits no document");
    }
  }
  if (!l.grammar_vocab) {
    l.grammar_vocab = grammar::vocab_from_tokenizer(*l.tokenizer, l.stop_tokens);
  }
  if (l.maskers.size() >= kMaxCachedMaskers) l.maskers.clear();
  auto masker = std::make_shared<grammar::TokenMasker>(std::move(g), l.grammar_vocab);
  l.maskers.emplace(key, masker);
  return masker;
}

}  // namespace arc
