// arclight-engine make-test-model: writes a GGUF of a supported family with random weights.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "arc/log.h"
#include "commands.h"
#include "model/test_model.h"
#include "vision/test_mmproj.h"

namespace arc::cli {

void add_make_test_model_command(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("make-test-model",
                                 "Write a GGUF test model with fixed-seed random weights");
  struct Opts {
    TestModelOptions o;
    std::string family = "qwen3moe";
    std::string out;
    std::string mmproj;
    std::string chat_template_file;
    vision::TestMmprojOptions v;
  };
  auto opts = std::make_shared<Opts>();
  TestModelOptions& o = opts->o;
  cmd->add_option("--family", opts->family,
                  "qwen3moe, qwen2moe, llama, qwen3, qwen3vlmoe, glm4moe, minimax-m2, gpt-oss, "
                  "deepseek2, qwen3next")
      ->capture_default_str();
  cmd->add_option("--out", opts->out, "output .gguf file")->required();
  cmd->add_option("--layers", o.n_layer)->capture_default_str();
  cmd->add_option("--hidden", o.n_embd)->capture_default_str();
  cmd->add_option("--heads", o.n_head)->capture_default_str();
  cmd->add_option("--kv-heads", o.n_kv_head)->capture_default_str();
  cmd->add_option("--head-dim", o.head_dim)->capture_default_str();
  cmd->add_option("--experts", o.n_expert, "0: family default (8 for MoE families; llama dense)");
  cmd->add_option("--experts-used", o.n_expert_used)->capture_default_str();
  cmd->add_option("--expert-ff", o.n_ff_exp)->capture_default_str();
  cmd->add_option("--shared-ff", o.n_ff_shexp, "qwen2moe shared-expert FFN")->capture_default_str();
  cmd->add_option("--ff", o.n_ff, "dense FFN")->capture_default_str();
  cmd->add_option("--vocab", o.n_vocab, "synthetic vocabulary size (>= 259)");
  cmd->add_option("--type", o.type, "F32, F16, Q8_0, Q4_K, Q6_K, Q4_K_M, Q5_K_M, ...")
      ->capture_default_str();
  cmd->add_option("--experts-type", o.experts_type,
                  "routed experts' matrices in this type (e.g. MXFP4, as gpt-oss ships them)");
  cmd->add_option("--sliding-window", o.sliding_window, "gpt-oss: sliding window (0: 128)")
      ->capture_default_str();
  cmd->add_flag("!--untied", o.tied_embeddings, "write a separate output.weight");
  cmd->add_option("--tokenizer-fixture", o.tokenizer_fixture,
                  "real vocabulary: qwen3, llama3, deepseek_v3, gptoss");
  cmd->add_option("--fixtures-dir", o.fixtures_dir, "folder holding tokenizers/NAME/")
      ->capture_default_str();
  cmd->add_option("--chat-template", opts->chat_template_file,
                  "write this file as the chat template (a family's real template on a test "
                  "vocabulary)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--seed", o.seed)->capture_default_str();
  cmd->add_flag("--repeat-weights", o.repeat_weights,
                "copy layer 0 to every layer and expert 0 to every expert (multi-GB speed-test "
                "models in seconds)");
  cmd->add_option("--dense-lead", o.n_dense_lead,
                  "glm4moe, deepseek2: leading dense layers (of --ff)")
      ->capture_default_str();
  cmd->add_option("--nextn", o.n_nextn,
                  "glm4moe, deepseek2: MTP layers after the forward layers (-1: the family's, "
                  "1 for glm4moe, 0 for deepseek2)")
      ->capture_default_str();
  cmd->add_flag("--qk-norm", o.qk_norm, "glm4moe: per-head q/k norms (as GLM-4.5 355B)");
  cmd->add_option("--q-lora-rank", o.q_lora_rank, "deepseek2: q LoRA rank (0: attn_q, no LoRA)")
      ->capture_default_str();
  cmd->add_option("--kv-lora-rank", o.kv_lora_rank, "deepseek2: the cached latent's width")
      ->capture_default_str();
  cmd->add_option("--v-head-dim", o.v_head_dim, "deepseek2: value head size (--head-dim is q/k)")
      ->capture_default_str();
  cmd->add_option("--ssm-k-heads", o.ssm_k_heads, "qwen3next: Gated DeltaNet k heads")
      ->capture_default_str();
  cmd->add_option("--ssm-v-heads", o.ssm_v_heads, "qwen3next: v heads (a multiple of k heads)")
      ->capture_default_str();
  cmd->add_option("--ssm-head-dim", o.ssm_head_dim, "qwen3next: k and v head size")
      ->capture_default_str();
  cmd->add_option("--full-attn-interval", o.full_attn_interval,
                  "qwen3next: every Nth layer is full attention, the others Gated DeltaNet")
      ->capture_default_str();
  cmd->add_option("--rot-dim", o.rot_dim, "rotated dims per head (0: the family's)")
      ->capture_default_str();
  cmd->add_option("--deepstack", o.n_deepstack, "qwen3vlmoe: layers taking deepstack features")
      ->capture_default_str();
  cmd->add_option("--mmproj", opts->mmproj,
                  "also write a tiny random Qwen3-VL vision projector (mmproj) for the model");
  cmd->add_option("--vision-layers", opts->v.n_layer)->capture_default_str();
  cmd->add_option("--vision-hidden", opts->v.n_embd)->capture_default_str();
  cmd->add_option("--vision-heads", opts->v.n_head)->capture_default_str();
  cmd->add_option("--vision-ff", opts->v.n_ff)->capture_default_str();
  cmd->add_option("--mmproj-type", opts->v.type, "projector matrices: F32, F16, Q8_0")
      ->capture_default_str();
  cmd->add_option("--patch", opts->v.patch_size, "vision patch size (real models: 16)")
      ->capture_default_str();
  o.fixtures_dir = "../shared/fixtures";
  cmd->callback([opts, &ctx] {
    auto fam = family_from_name(opts->family);
    if (!fam) {
      std::fprintf(stderr,
                   "error: unknown family '%s' (qwen3moe, qwen2moe, llama, qwen3, qwen3vlmoe, "
                   "glm4moe, minimax-m2, gpt-oss, deepseek2, qwen3next)\n",
                   opts->family.c_str());
      ctx.exit_code = 2;
      return;
    }
    opts->o.family = *fam;
    if (!opts->chat_template_file.empty()) {
      std::ifstream in(opts->chat_template_file, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      opts->o.chat_template = text.str();
    }
    Status s = write_test_model(opts->o, opts->out);
    if (s.ok() && !opts->mmproj.empty()) {
      // The projector's output is the model's hidden size; its deepstack mergers as many as the
      // model's deepstack layers, spread over the encoder's blocks.
      vision::TestMmprojOptions& v = opts->v;
      v.proj_dim = opts->o.n_embd;
      v.seed = opts->o.seed;
      v.deepstack_layers.clear();
      const int64_t n_ds = opts->o.family == Family::kQwen3VlMoe
                               ? std::min(opts->o.n_deepstack, opts->o.n_layer)
                               : 0;
      for (int64_t k = 0; k < n_ds; ++k) v.deepstack_layers.push_back(k * v.n_layer / n_ds);
      s = vision::write_test_mmproj(v, opts->mmproj);
    }
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
      ctx.exit_code = 1;
      return;
    }
    logger("cli")->info("wrote {}", opts->out);
    ctx.exit_code = 0;
  });
}

}  // namespace arc::cli
