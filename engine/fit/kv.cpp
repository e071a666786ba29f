// KV cache arithmetic: bytes per token for GQA and MLA layers, sliding-window caps and the fixed
// state of linear-attention layers (formulas in arc/fit.h).
#include <algorithm>
#include <cctype>
#include <string>

#include "arc/ascii.h"
#include "arc/fit.h"

namespace arc::fit {

std::string_view kv_dtype_name(KvDtype t) {
  switch (t) {
    case KvDtype::kF16:
      return "f16";
    case KvDtype::kBF16:
      return "bf16";
    case KvDtype::kF32:
      return "f32";
    case KvDtype::kQ8_0:
      return "q8_0";
    case KvDtype::kFp8:
      return "fp8";
    case KvDtype::kQ4_0:
      return "q4_0";
  }
  return "?";
}

Result<KvDtype> parse_kv_dtype(std::string_view name) {
  const std::string n = ascii_lower(name);
  for (KvDtype t : {KvDtype::kF16, KvDtype::kBF16, KvDtype::kF32, KvDtype::kQ8_0, KvDtype::kFp8,
                    KvDtype::kQ4_0}) {
    if (n == kv_dtype_name(t)) return t;
  }
  if (n == "fp16") return KvDtype::kF16;
  if (n == "fp32") return KvDtype::kF32;
  if (n == "fp8_e4m3" || n == "fp8_e5m2" || n == "e4m3") return KvDtype::kFp8;
  return invalid_argument("unknown KV dtype '" + std::string(name) +
                          "'; use one of f16, bf16, f32, q8_0, fp8, q4_0");
}

double kv_dtype_bytes(KvDtype t) {
  switch (t) {
    case KvDtype::kF16:
    case KvDtype::kBF16:
      return 2.0;
    case KvDtype::kF32:
      return 4.0;
    case KvDtype::kQ8_0:
      return 34.0 / 32.0;  // 32 int8 + one f16 scale per block
    case KvDtype::kFp8:
      return 1.0;
    case KvDtype::kQ4_0:
      return 18.0 / 32.0;  // 32 nibbles + one f16 scale per block
  }
  return 2.0;
}

std::string_view attention_kind_name(AttentionKind k) {
  switch (k) {
    case AttentionKind::kUnknown:
      return "unknown";
    case AttentionKind::kGqa:
      return "gqa";
    case AttentionKind::kMla:
      return "mla";
  }
  return "unknown";
}

namespace {

// Bytes one attention layer stores per token, before any window cap.
double layer_bytes_per_token(const Architecture& a, KvDtype t) {
  const double b = kv_dtype_bytes(t);
  switch (a.attention) {
    case AttentionKind::kGqa:
      return static_cast<double>(a.kv_heads) * static_cast<double>(a.key_length + a.value_length) *
             b;
    case AttentionKind::kMla:
      return static_cast<double>(a.kv_lora_rank + a.rope_dim) * b;
    case AttentionKind::kUnknown:
      return 0.0;
  }
  return 0.0;
}

}  // namespace

double kv_bytes_per_token(const Architecture& a, KvDtype t) {
  return layer_bytes_per_token(a, t) *
         static_cast<double>(std::max<int64_t>(0, a.attention_layers()));
}

double kv_bytes_for_tokens(const Architecture& a, int64_t tokens, KvDtype t) {
  if (tokens <= 0) return 0.0;
  const double per = layer_bytes_per_token(a, t);
  const int64_t attn = std::max<int64_t>(0, a.attention_layers());
  const int64_t sliding = a.sliding_window > 0 ? std::clamp<int64_t>(a.sliding_layers, 0, attn) : 0;
  const int64_t full = attn - sliding;
  const double windowed = static_cast<double>(std::min(tokens, a.sliding_window));
  return per * (static_cast<double>(full) * static_cast<double>(tokens) +
                static_cast<double>(sliding) * windowed);
}

uint64_t recurrent_state_bytes(const Architecture& a) {
  if (a.linear_layers <= 0) return 0;
  return static_cast<uint64_t>(a.linear_layers) * a.linear_state_bytes_per_layer;
}

}  // namespace arc::fit
