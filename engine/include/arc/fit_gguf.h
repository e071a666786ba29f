// The fit calculator's view of a local GGUF file: exact weight bytes from the tensor table, active
// bytes per token from the expert tensors, and the KV architecture from `<arch>.*` metadata.
//
// Read: <arch>.block_count, embedding_length, context_length, attention.head_count(_kv) (per-layer
// arrays: the largest value), attention.key_length / value_length (else hidden / heads),
// attention.kv_lora_rank + rope.dimension_count (MLA), attention.sliding_window (+ the layer
// pattern: gpt-oss alternates, `attention.sliding_window_pattern` N means every Nth layer is
// full), full_attention_interval + ssm.* (qwen3next linear-attention layers and their state).
// Active bytes: every tensor except routed experts (`*_exps*`, read used/total) and the token
// embedding (one row per token) unless it doubles as the output head.
#pragma once

#include <string>

#include "arc/fit.h"
#include "arc/gguf.h"
#include "arc/status.h"

namespace arc::fit {

Result<ModelSpec> model_spec_from_gguf(const gguf::File& file);
Result<ModelSpec> model_spec_from_gguf_file(const std::string& path);

}  // namespace arc::fit
