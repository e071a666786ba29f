// The grammar of one tool call in a model family's own syntax, as its chat template writes calls
// into the history: JSON calls (Qwen, Llama 3), XML-style calls whose arguments are typed by the
// tool's schema (GLM-4.5, Qwen3-Coder, MiniMax-M2) and Harmony's commentary messages (gpt-oss).
#pragma once

#include <string>

#include "arc/output_parser.h"
#include "arc/service.h"
#include "grammar/grammar.h"
#include "grammar/json_schema.h"

namespace arc {

// True when calls of this syntax can be forced (tool_choice required / named, strict tools).
bool tool_call_grammar_supported(OutputSyntax syntax);
// The text that opens a call in free text ("auto" with strict tools), or empty when the syntax
// has none (a Llama 3 call is a bare JSON reply; Harmony calls are channel headers).
std::string tool_call_marker(OutputSyntax syntax);

// One call of one of c.tools. after_marker: without the opening marker (free text matched it).
// A parameter schema that cannot be enforced is an error for a strict tool, else any value.
Result<grammar::Sym> tool_call_grammar(grammar::GrammarBuilder& b, grammar::JsonSchemaCompiler& jc,
                                       const OutputConstraint& c, OutputSyntax syntax,
                                       bool after_marker);

}  // namespace arc
