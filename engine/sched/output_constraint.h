// An OutputConstraint (arc/service.h) compiled for the loaded model: its grammar (the JSON, or the
// call in the model family's tool-call syntax, after the reasoning block when the prompt opened
// one) and the token masker over the model's vocabulary. Compiled maskers are kept per model,
// keyed by the constraint, so that the same schema again (agents send the same tools every turn)
// reuses the token masks already computed.
#pragma once

#include <memory>

#include "arc/output_parser.h"
#include "arc/service.h"
#include "grammar/token_mask.h"

namespace arc {

struct LoadedModel;

struct ConstraintOptions {
  OutputSyntax syntax = OutputSyntax::kPlain;  // of the model (tool calls)
  bool starts_in_reasoning = false;            // the prompt opened <think>: free text first
};

// Null (no constraint) for kNone, and for tool calls in a syntax that has no grammar yet
// (DeepSeek V3, gpt-oss: logged). kInvalidArgument naming the keyword for a schema that cannot be
// enforced.
Result<std::shared_ptr<grammar::TokenMasker>> constraint_masker(LoadedModel& l,
                                                                const OutputConstraint& c,
                                                                const ConstraintOptions& o);

}  // namespace arc
