#include "sched/output_constraint.h"

#include "arc/log.h"
#include "grammar/json_schema.h"
#include "grammar/tokenizer_vocab.h"
#include "sched/engine_service_impl.h"
#include "sched/tool_call_grammar.h"

namespace arc {

namespace {

using grammar::GrammarBuilder;
using grammar::Sym;
using nlohmann::ordered_json;

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

}  // namespace

Result<std::shared_ptr<grammar::TokenMasker>> constraint_masker(LoadedModel& l,
                                                                const OutputConstraint& c,
                                                                const ConstraintOptions& o) {
  if (c.kind == OutputConstraint::Kind::kNone) return std::shared_ptr<grammar::TokenMasker>();
  if (c.kind == OutputConstraint::Kind::kToolCall && c.optional &&
      tool_call_marker(o.syntax).empty()) {
    // A Llama 3 call is a bare JSON reply and a Harmony call a channel header: no marker in free
    // text opens the constrained part.
    logger("engine")->info(
        "strict tools with tool_choice auto: this model's calls ({}) have no opening marker in "
        "free text, so they are not constrained",
        output_syntax_name(o.syntax));
    return std::shared_ptr<grammar::TokenMasker>();
  }
  if (c.kind == OutputConstraint::Kind::kToolCall && !tool_call_grammar_supported(o.syntax)) {
    logger("engine")->warn(
        "tool_choice forces a call, but this model's tool-call syntax ({}) has no grammar yet; "
        "the call is not constrained",
        output_syntax_name(o.syntax));
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
      ARC_ASSIGN_OR_RETURN(body, tool_call_grammar(b, jc, c, o.syntax, c.optional));
      if (c.optional) {
        // Free text (reasoning included) in which the marker opens a constrained call.
        body = b.until("text", tool_call_marker(o.syntax), {body}, /*free_text=*/true);
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
    // The family's markers are text to the grammar even where the vocabulary makes them
    // control tokens (gpt-oss's channels, GLM's <arg_key>, ...).
    const OutputSyntax syntax = l.syntax;
    l.grammar_vocab = grammar::vocab_from_tokenizer(
        *l.tokenizer, l.stop_tokens,
        [syntax](std::string_view t) { return output_syntax_reads_token(syntax, t); });
  }
  if (l.maskers.size() >= kMaxCachedMaskers) l.maskers.clear();
  auto masker = std::make_shared<grammar::TokenMasker>(std::move(g), l.grammar_vocab);
  l.maskers.emplace(key, masker);
  return masker;
}

}  // namespace arc
