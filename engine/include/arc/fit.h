// Memory-fit and speed-ceiling calculator: will this model fit on N DGX Spark boxes, how much
// context is left, and how fast can decode go at most?
//
// Value types in, value types out; no I/O here (see arc/catalog.h for catalog entries and
// arc/fit_gguf.h for local GGUF files, arc/fit_json.h for the JSON form of the report).
//
// The model of memory, per box (tensor parallel over `boxes` ranks, DESIGN.md "Fit and speed"):
//   used = weights share + KV share + recurrent state + workspaces + runtime + reserve
//   headroom = usable - used
// - weights share: weights / boxes (tensor parallel splits every matrix; the small replicated
//   parts, norms and router, are ignored). N-gram/Engram tables count unless kept on disk.
// - KV: per token, GQA layers x 2 x kv_heads x head_dim x bytes (K and V may differ in width:
//   key_length + value_length replaces 2 x head_dim); MLA layers x (kv_lora_rank + rope_dim) x
//   bytes; sliding-window layers hold at most `sliding_window` tokens; linear-attention /
//   recurrent layers hold a fixed state per sequence. GQA KV is split by KV heads (a box holds
//   ceil(kv_heads / boxes) heads, so with fewer heads than boxes heads are replicated); the MLA
//   latent is shared by all heads and so replicated on every box.
// - workspaces: ubatch x hidden x 4 bytes x 12 (activations, norms, attention scratch of one
//   micro-batch) + concurrency x vocab x 4 (logits); an estimate, zero when hidden is unknown.
// - runtime: CUDA context, NCCL buffers, cuBLAS workspace, the engine itself (a flat figure).
// - reserve: what the user keeps for the OS and other apps.
// Verdict: "does not fit" when headroom < 0; "tight" when 0 <= headroom < tight_below_gib (a GB10
// that runs out of memory freezes instead of killing the process, seed 002 "Long context and
// memory", so a small margin is flagged); "fits" otherwise.
//
// Decode ceiling (one stream): each box streams its share of the active weights plus its KV for
// one sequence at the chosen context from its own memory, in parallel:
//   ceiling = bandwidth_per_box / (active_bytes / boxes + kv_read_per_box(context))
// which is DESIGN's bandwidth x boxes / bytes-per-token when everything splits evenly.
// Link bytes per token (per box, sent): two all-reduces per layer of hidden x activation_bytes;
// a ring all-reduce sends 2 x (boxes-1)/boxes of the message per rank:
//   link = layers x 2 x hidden x activation_bytes x 2 x (boxes-1) / boxes
// For two boxes this is layers x 2 x hidden x 2 bytes, seed 000's "45 layers times 2 transfers
// times 8KB ... about 0.7MB per token". Utilisation = link x ceiling / link_bandwidth.
//
// Units: GB = 1e9 bytes, GiB = 2^30 bytes; the struct fields say which.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arc/status.h"

namespace arc::fit {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;

// KV cache element type. Serialized by name ("f16", "q8_0", ...); never renumber.
enum class KvDtype : int {
  kF16 = 0,
  kBF16 = 1,
  kF32 = 2,
  kQ8_0 = 3,  // 32 values in 34 bytes
  kFp8 = 4,   // e4m3 / e5m2, 1 byte
  kQ4_0 = 5,  // 32 values in 18 bytes
};

std::string_view kv_dtype_name(KvDtype t);
Result<KvDtype> parse_kv_dtype(
    std::string_view name);        // "f16", "bf16", "f32", "q8_0", "fp8", "q4_0"
double kv_dtype_bytes(KvDtype t);  // bytes per element, e.g. 1.0625 for q8_0

enum class AttentionKind : int {
  kUnknown = 0,  // the KV numbers are not published: KV is left out and the report says so
  kGqa = 1,      // grouped-query (includes MHA and MQA)
  kMla = 2,      // multi-head latent attention (DeepSeek-V2/V3 style)
};
std::string_view attention_kind_name(AttentionKind k);

// The architecture numbers the calculator needs. Zero means "not known".
struct Architecture {
  int64_t layers = 0;       // transformer blocks (attention + linear-attention layers)
  int64_t hidden = 0;       // residual width (all-reduce message size, workspaces)
  int64_t vocab = 0;        // logits workspace
  int64_t max_context = 0;  // longest context the model supports
  AttentionKind attention = AttentionKind::kUnknown;
  // GQA
  int64_t kv_heads = 0;
  int64_t key_length = 0;    // per-head K width (head_dim)
  int64_t value_length = 0;  // per-head V width (head_dim)
  // MLA
  int64_t kv_lora_rank = 0;
  int64_t rope_dim = 0;
  // Sliding-window layers (a subset of the attention layers) keep at most `sliding_window` tokens.
  int64_t sliding_window = 0;
  int64_t sliding_layers = 0;
  // Linear-attention / recurrent layers: no per-token KV, a fixed state per sequence and layer.
  int64_t linear_layers = 0;
  uint64_t linear_state_bytes_per_layer = 0;

  int64_t attention_layers() const { return layers - linear_layers; }
};

// What the calculator knows about one model build, from a GGUF file or a catalog entry.
struct ModelSpec {
  std::string name;                     // "GLM-5.3-Flash / exl3-4bpw" or the file name
  uint64_t weights_bytes = 0;           // in memory, n-gram tables excluded
  uint64_t ngram_table_bytes = 0;       // Engram / PLE n-gram tables (0: none or unknown)
  uint64_t active_bytes_per_token = 0;  // weight bytes one decode step reads, all boxes together
  Architecture arch;
  std::string weights_basis;       // how weights_bytes was obtained, for the user
  std::vector<std::string> notes;  // caveats that travel into the report
};

struct Cluster {
  int boxes = 1;
  double usable_gib = 121.6;     // per box: what a GB10 reports usable (seeds 002, 003)
  double bandwidth_gbs = 273.0;  // per box, GB/s: GB10's rated LPDDR5x bandwidth
  double link_gbs = 25.0;        // per box, GB/s: 200 Gb/s QSFP; seed 003 measured 13.9 GB/s on one
                                 // PCIe interface of the ConnectX-7 and ~19 GB/s NCCL on both
  double reserve_gib = 4.0;      // per box, for the OS and other apps
  double runtime_gib = 2.0;      // per box: CUDA context, NCCL, cuBLAS workspace, engine
  double tight_below_gib = 3.0;  // headroom under this is "tight"
};

struct Workload {
  int64_t context = 32768;  // tokens per sequence
  int concurrency = 1;      // sequences held at once
  KvDtype kv_dtype = KvDtype::kF16;
  bool ngram_on_disk = false;     // keep Engram/n-gram tables on NVMe
  int64_t ubatch_tokens = 512;    // micro-batch for the workspace estimate
  double activation_bytes = 2.0;  // bf16 activations on the wire
};

enum class Verdict : int { kFits = 0, kTight = 1, kDoesNotFit = 2 };
std::string_view verdict_name(Verdict v);  // "fits", "tight", "does not fit"

// One box's memory, bytes.
struct BoxBudget {
  uint64_t weights = 0;
  uint64_t ngram_tables = 0;
  uint64_t kv = 0;
  uint64_t recurrent_state = 0;
  uint64_t workspace = 0;
  uint64_t runtime = 0;
  uint64_t reserve = 0;
  uint64_t used = 0;  // sum of the above
  uint64_t usable = 0;
  int64_t headroom = 0;  // usable - used, negative when it does not fit
};

// The verdict for one cluster size (the 1-4 box table).
struct BoxRow {
  int boxes = 0;
  BoxBudget per_box;
  Verdict verdict = Verdict::kDoesNotFit;
  int64_t max_context = 0;  // at the chosen concurrency; 0 when nothing fits, -1 unknown
  double decode_ceiling_tok_s = 0;
};

struct Report {
  ModelSpec model;
  Cluster cluster;
  Workload workload;

  BoxBudget per_box;
  Verdict verdict = Verdict::kDoesNotFit;
  std::string reason;  // one plain sentence

  bool kv_known = false;
  double kv_bytes_per_token = 0;  // whole model, one sequence, before any window cap
  uint64_t kv_bytes_total = 0;    // all boxes together at context x concurrency (no replication)
  // Largest context that fits at the chosen concurrency: 0 when not even one token fits, -1 when
  // the KV layout and the model's own limit are both unknown.
  int64_t max_context = 0;
  bool max_context_capped = false;  // true when limited by the model's own max_context

  double active_bytes_per_token = 0;  // weights read per decode step, all boxes
  double read_bytes_per_box = 0;      // per decode step and box: active share + KV of 1 stream
  double decode_ceiling_tok_s = 0;    // one stream
  double link_bytes_per_token = 0;    // per box, sent
  double link_utilisation = 0;        // at the ceiling, 0..1

  std::vector<BoxRow> by_boxes;  // 1, 2, 3, 4 boxes (same workload)
  std::vector<std::string> warnings;
};

// KV bytes for one sequence of `tokens` tokens, whole model (no replication), sliding windows
// applied; recurrent state excluded. 0 when the attention kind is unknown.
double kv_bytes_for_tokens(const Architecture& a, int64_t tokens, KvDtype t);
// KV bytes per token before window caps (what "KV per token" means in the seeds and configs).
double kv_bytes_per_token(const Architecture& a, KvDtype t);
// Fixed recurrent state of one sequence, whole model.
uint64_t recurrent_state_bytes(const Architecture& a);

// Checks the inputs (boxes >= 1, context >= 1, positive memory and bandwidth, ...) and computes
// the report, including the 1-4 box table.
Result<Report> compute(const ModelSpec& model, const Cluster& cluster, const Workload& workload);

// "123.4 GiB" / "132.5 GB" helpers shared by the CLI and the app.
std::string format_gib(double bytes);
std::string format_gb(double bytes);

// The per-box table and the 1-4 box table as plain text (what `arclight-engine fit` prints).
std::string format_report_text(const Report& r);

}  // namespace arc::fit
