// `arclight-engine inspect FILE [--json]`: what a GGUF model is and what it weighs. The figures
// come from arc::gguf::summarize(); this file only prints them.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/gguf.h"
#include "arc/gguf_summary.h"
#include "arc/model_config.h"
#include "arc/shard_load.h"
#include "commands.h"

namespace arc::cli {

namespace {

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.2f} {}", v, units[u]);
}

template <typename T>
std::string or_dash(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string("-");
}

std::string token_text(const std::optional<gguf::SpecialToken>& t) {
  if (!t) return "-";
  return t->text ? fmt::format("{} ({:?})", t->id, *t->text) : fmt::format("{}", t->id);
}

void print_text(const gguf::ModelSummary& s) {
  const auto& hp = s.hp;
  std::string out;
  auto line = [&out](std::string_view label, const std::string& value) {
    out += fmt::format("{:<28}{}\n", label, value);
  };
  line("file", fmt::format("{} (GGUF v{}, {} file{}, {})", s.path, s.version, s.n_files,
                           s.n_files == 1 ? "" : "s", human_bytes(s.file_bytes)));
  line("architecture", s.architecture.empty() ? std::string("(none)")
                       : s.known_architecture
                           ? s.architecture
                           : s.architecture + " (unknown to Arclight: reported, not run)");
  if (!s.name.empty()) line("name", s.name);
  line("layers", or_dash(hp.block_count));
  line("hidden size", or_dash(hp.embedding_length));
  line("attention heads", or_dash(hp.head_count));
  line("KV heads", or_dash(hp.head_count_kv));
  line("head dim", or_dash(hp.head_dim) + (hp.value_length && hp.value_length != hp.key_length
                                               ? fmt::format(" (value {})", *hp.value_length)
                                               : ""));
  line("FFN size", or_dash(hp.feed_forward_length));
  if (hp.expert_count) {
    line("experts (used/total)",
         fmt::format("{}/{}", or_dash(hp.expert_used_count), *hp.expert_count));
    line("expert FFN size", or_dash(hp.expert_feed_forward_length));
    if (hp.expert_shared_count) line("shared experts", or_dash(hp.expert_shared_count));
    if (hp.leading_dense_block_count) {
      line("leading dense layers", or_dash(hp.leading_dense_block_count));
    }
    if (hp.expert_gating_func) {
      const int64_t g = *hp.expert_gating_func;
      line("expert gating", g == 1 ? "softmax" : g == 2 ? "sigmoid" : fmt::format("type {}", g));
    }
    if (hp.expert_group_count && *hp.expert_group_count > 1) {
      line("expert groups (used/total)",
           fmt::format("{}/{}", or_dash(hp.expert_group_used_count), *hp.expert_group_count));
    }
    if (hp.expert_weights_norm) line("top-k renormalised", *hp.expert_weights_norm ? "yes" : "no");
    if (hp.expert_weights_scale) line("routed scaling", or_dash(hp.expert_weights_scale));
  }
  if (hp.nextn_predict_layers && *hp.nextn_predict_layers > 0) {
    line("MTP layers", fmt::format("{} (in the layer count; drafts with --spec mtp, {})",
                                   *hp.nextn_predict_layers, human_bytes(s.mtp_bytes)));
  }
  if (hp.kv_lora_rank) {
    line("latent attention (MLA)",
         fmt::format("kv rank {}, q rank {}, q/k head {} (rope {}), v head {}", *hp.kv_lora_rank,
                     hp.q_lora_rank ? fmt::format("{}", *hp.q_lora_rank) : std::string("none"),
                     or_dash(hp.key_length_mla), or_dash(hp.rope_dimension_count),
                     or_dash(hp.value_length_mla)));
    if (hp.mla_kv_bytes_per_token_f16) {
      line("KV cache per token", fmt::format("{} bytes at F16 (latent + rope key per layer)",
                                             *hp.mla_kv_bytes_per_token_f16));
    }
  }
  if (hp.full_attention_interval) {
    line("linear attention", fmt::format("Gated DeltaNet, full attention every {} layers; {} k / "
                                         "{} v heads, k head {}, value width "
                                         "{}, conv kernel {}",
                                         *hp.full_attention_interval, or_dash(hp.ssm_group_count),
                                         or_dash(hp.ssm_time_step_rank), or_dash(hp.ssm_state_size),
                                         or_dash(hp.ssm_inner_size), or_dash(hp.ssm_conv_kernel)));
    if (hp.recurrent_state_bytes_per_seq) {
      line("state per sequence",
           fmt::format("{} ({} bytes, f32; each prefix-cache snapshot as much)",
                       human_bytes(static_cast<uint64_t>(*hp.recurrent_state_bytes_per_seq)),
                       *hp.recurrent_state_bytes_per_seq));
    }
  }
  if (hp.rope_dimension_count) line("RoPE dims per head", or_dash(hp.rope_dimension_count));
  line("context length", or_dash(hp.context_length));
  line("RoPE freq base", or_dash(hp.rope_freq_base));
  if (hp.rope_scaling_type || hp.rope_scaling_factor) {
    line("RoPE scaling", fmt::format("{} factor {} (original context {})",
                                     or_dash(hp.rope_scaling_type), or_dash(hp.rope_scaling_factor),
                                     or_dash(hp.rope_scaling_original_context_length)));
  }
  if (hp.sliding_window) {
    // gpt-oss without the pattern key alternates (llama.cpp's default period 2).
    line("sliding window",
         fmt::format("{} tokens, {}", *hp.sliding_window,
                     hp.sliding_window_pattern
                         ? fmt::format("layer l slides when l % {} < {}",
                                       *hp.sliding_window_pattern, *hp.sliding_window_pattern - 1)
                         : std::string("even layers (odd: full attention)")));
  }
  if (hp.attention_sinks) line("attention sinks", "yes (one logit per head)");
  const auto& tk = s.tokenizer;
  line("tokenizer", fmt::format("{} (pre {}), {} tokens", tk.model.empty() ? "-" : tk.model,
                                tk.pre.empty() ? "-" : tk.pre, tk.vocab_size));
  line("BOS / EOS / PAD",
       fmt::format("{} / {} / {}", token_text(tk.bos), token_text(tk.eos), token_text(tk.pad)));
  line("chat template", tk.has_chat_template ? "yes" : "no");
  line("tensors",
       fmt::format("{}, {} ({} bytes)", s.n_tensors, human_bytes(s.tensor_bytes), s.tensor_bytes));
  for (const auto& [type, bytes] : s.bytes_by_type) {
    line(fmt::format("  {}", type), fmt::format("{} ({} bytes)", human_bytes(bytes), bytes));
  }
  line("outside layers", human_bytes(s.non_layer_bytes));
  for (const auto& [layer, bytes] : s.bytes_by_layer) {
    line(fmt::format("  blk.{}", layer), fmt::format("{} ({} bytes)", human_bytes(bytes), bytes));
  }
  if (s.active_bytes_per_token) {
    line("experts' bytes", human_bytes(s.expert_bytes));
    line("active per token", fmt::format("{} ({} bytes)", human_bytes(*s.active_bytes_per_token),
                                         *s.active_bytes_per_token));
  }
  std::fputs(out.c_str(), stdout);
}

}  // namespace

void add_inspect_command(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "inspect", "Show a GGUF model's architecture, hyperparameters, tokenizer and sizes");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("FILE", *path, "GGUF file (any part of a split model)")->required();
  cmd->add_flag("--json", *json, "Print the summary as JSON");
  cmd->callback([&ctx, path, json] {
    auto file = gguf::File::open(*path);
    if (!file.ok()) {
      std::fprintf(stderr, "error: %s\n", file.status().to_string().c_str());
      ctx.exit_code = 1;
      return;
    }
    const gguf::ModelSummary s = gguf::summarize(*file);
    // How it splits over 2, 3 and 4 ranks (tensor parallelism): heads, padding, widths.
    std::vector<std::pair<int, std::vector<std::string>>> splits;
    if (config_from_gguf(*file).ok()) {
      for (int n : {2, 3, 4}) splits.emplace_back(n, describe_split(*file, n));
    }
    if (*json) {
      nlohmann::json j = gguf::to_json(s);
      for (const auto& [n, lines] : splits) j["tensor_parallel"][std::to_string(n)] = lines;
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      print_text(s);
      for (const auto& [n, lines] : splits) {
        for (size_t i = 0; i < lines.size(); ++i) {
          std::printf("%-28s%s\n", i == 0 ? fmt::format("split over {} ranks", n).c_str() : "",
                      lines[i].c_str());
        }
      }
    }
    ctx.exit_code = 0;
  });
}

}  // namespace arc::cli
