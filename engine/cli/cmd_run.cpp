// arclight-engine run: generate text from a prompt, streaming it as it is produced.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>

#include "arc/forward.h"
#include "arc/tp_runtime.h"
#include "arc/tp_session.h"
#include "arc/vision_encoder.h"
#include "backend_flags.h"
#include "commands.h"
#include "sched/image_inputs.h"
#include "sched/mmproj_pairing.h"
#include "sched/sampler.h"

#if __has_include("arc/tokenizer.h")
#include "arc/tokenizer.h"
#define ARC_RUN_HAS_TOKENIZER 1
#endif
#if __has_include("arc/chat_template.h")
#include "arc/chat_template.h"
#define ARC_RUN_HAS_CHAT 1
#endif

namespace arc::cli {
namespace {

struct RunOpts {
  std::string model;
  std::string prompt;
  std::string prompt_ids;  // "1,2,3": token ids instead of text
  bool chat = false;
  int max_tokens = 128;
  SamplingParams sampling{.temperature = 0.0f};
  bool json = false;
  int logprobs = 0;
  int threads = 0;
  int tp = 1;                      // tensor-parallel ranks (mpirun -np N)
  double tp_timeout = 60;          // seconds one collective may take before the job is aborted
  std::string moe_split = "auto";  // --moe-split
  std::string test_fault;          // tests only: "exit" or "hang" on rank 1 before test_fault_step
  int64_t test_fault_step = 0;
  BackendOptions backend;
  std::vector<std::string> images;  // image files, placed before the prompt text
  std::string mmproj;               // vision projector (default: paired beside the model)
};

Result<std::vector<int32_t>> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      long v = std::stol(item, &used);
      if (used != item.size() || v < 0 || v > INT32_MAX) throw std::invalid_argument(item);
      ids.push_back(static_cast<int32_t>(v));
    } catch (const std::exception&) {
      return invalid_argument("--prompt-ids: '" + item + "' is not a token id");
    }
  }
  if (ids.empty()) return invalid_argument("--prompt-ids is empty");
  return ids;
}

int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
  return 1;
}

// What rank 0 feeds the model: the prompt (image placeholders expanded) and its image inputs.
struct PromptSetup {
  std::vector<int32_t> prompt;
  std::vector<int32_t> stop_ids;
#ifdef ARC_RUN_HAS_TOKENIZER
  std::optional<Tokenizer> tok;
#endif
  bool images = false;
  ImagePrompt image_prompt;
};

// Rank 0 only: with --tp the workers take the tokens (and the encoder's output) from the steps.
Result<PromptSetup> prepare_prompt(const RunOpts& o, const Model& model) {
  const ModelConfig& c = model.config();
  PromptSetup out;
  // Images: the vision projector, and one placeholder per image ahead of the prompt text.
  std::unique_ptr<vision::VisionEncoder> encoder;
  std::string placeholders;
  if (!o.images.empty()) {
    if (!c.mrope()) {
      return invalid_argument(std::string(family_name(c.family)) +
                              " models take no images (vision families: qwen3vlmoe)");
    }
    const std::string mm = o.mmproj.empty() ? find_paired_mmproj(o.model, c) : o.mmproj;
    if (mm.empty()) {
      return not_found(
          "no vision projector: give --mmproj FILE (or put the model's mmproj-*.gguf beside it)");
    }
    // On a backend of the model's kind (its own instance, as the server does).
    BackendOptions vbo = o.backend;
    vbo.cuda_graphs = false;
    ARC_ASSIGN_OR_RETURN(auto vbe, open_backend(vbo, o.threads));
    ARC_ASSIGN_OR_RETURN(encoder, vision::VisionEncoder::load(mm, std::move(vbe)));
    for (size_t i = 0; i < o.images.size(); ++i) {
      placeholders += "<|vision_start|><|image_pad|><|vision_end|>";
    }
  }
#ifdef ARC_RUN_HAS_TOKENIZER
  auto tok = Tokenizer::from_gguf(model.file());
  if (!tok.ok() && o.prompt_ids.empty()) return tok.status().with_context("tokenizer");
  if (tok.ok()) {
    if (auto e = tok->eos_id()) out.stop_ids.push_back(*e);
    for (const char* s : {"<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<|end|>", "<|return|>"}) {
      if (auto id = tok->find_token(s)) out.stop_ids.push_back(*id);
    }
  }
#endif
  if (!o.prompt_ids.empty()) {
    ARC_ASSIGN_OR_RETURN(out.prompt, parse_ids(o.prompt_ids));
  } else {
#ifdef ARC_RUN_HAS_TOKENIZER
    std::string text = o.prompt;
    if (o.chat && text.empty()) {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    }
    text = placeholders + text;
    EncodeOptions enc = tok->default_encode_options();
    if (o.chat) {
#ifdef ARC_RUN_HAS_CHAT
      auto src = model.file().get_string("tokenizer.chat_template");
      if (!src) return not_found("the model has no tokenizer.chat_template");
      auto tpl = ChatTemplate::parse(*src);
      if (!tpl.ok()) return tpl.status().with_context("chat template");
      std::string bos = tok->bos_id() ? std::string(tok->piece(*tok->bos_id())) : "";
      std::string eos = tok->eos_id() ? std::string(tok->piece(*tok->eos_id())) : "";
      ChatFormatter fmt(std::move(tpl).value(), bos, eos);
      ChatMessage m;
      m.role = "user";
      m.content = text;
      auto rendered = fmt.format({m}, ChatFormatOptions{});
      if (!rendered.ok()) return rendered.status().with_context("chat template");
      text = *rendered;
      enc.add_bos = false;  // templates write their own BOS
#else
      return unimplemented("--chat needs the chat-template library in this build");
#endif
    }
    ARC_ASSIGN_OR_RETURN(out.prompt, tok->encode(text, enc));
#else
    return unimplemented("this build has no tokenizer: use --prompt-ids");
#endif
  }
  if (out.prompt.empty()) return invalid_argument("the prompt is empty");
  if (encoder) {
#ifdef ARC_RUN_HAS_TOKENIZER
    std::vector<ImageInput> inputs;
    for (const std::string& path : o.images) {
      std::ifstream f(path, std::ios::binary);
      if (!f) return not_found("cannot open image " + path);
      ImageInput in;
      in.bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      inputs.push_back(std::move(in));
    }
    auto pad = tok.ok() ? tok->find_token("<|image_pad|>") : std::nullopt;
    if (!pad) return invalid_argument("the model's vocabulary has no <|image_pad|> token");
    ImageEmbeddingCache cache;
    ARC_ASSIGN_OR_RETURN(
        out.image_prompt,
        expand_image_prompt(out.prompt, static_cast<int32_t>(*pad), inputs, *encoder, cache, c));
    out.prompt = out.image_prompt.tokens;
    out.images = true;
#else
    return unimplemented("--image needs the tokenizer library in this build");
#endif
  }
#ifdef ARC_RUN_HAS_TOKENIZER
  if (tok.ok()) out.tok.emplace(std::move(*tok));
#endif
  return out;
}

int run(RunOpts o) {
  auto opened = open_backend(o.backend, o.threads, o.tp);
  if (!opened.ok()) return fail(opened.status());
  std::unique_ptr<Backend> backend = std::move(*opened);
  // With --tp N only this rank's shard is loaded (config included), before the KV cache.
  std::unique_ptr<Model> loaded;
  auto tp = TpRuntime::load(o.tp, o.model, *backend, loaded,
                            std::chrono::milliseconds(static_cast<int64_t>(o.tp_timeout * 1000)),
                            *parse_moe_split(o.moe_split));
  if (!tp.ok()) return fail(tp.status());
  std::unique_ptr<Model>* model = &loaded;
  const ModelConfig& c = (*model)->config();

  // Rank 0 prepares the prompt (the tokenizer, stdin, the images: only it loads the vision
  // projector) and tells the workers its length, all they need to size their KV pools; -1 when
  // it failed (it reports why).
  Result<PromptSetup> setup = PromptSetup{};
  int64_t ctx = -1;
  if ((*tp)->rank() == 0) {
    setup = prepare_prompt(o, **model);
    if (setup.ok()) ctx = static_cast<int64_t>(setup->prompt.size()) + o.max_tokens;
  }
  if (o.tp > 1) {
    Communicator& comm = (*tp)->comm();
    Status s = comm.rank() == 0 ? comm.broadcast(&ctx, sizeof ctx, 0)
                                : comm.broadcast_no_deadline(&ctx, sizeof ctx, 0);
    if (!s.ok()) return fail(s);
  }
  if (!setup.ok()) return fail(setup.status());
  if (ctx < 0) return 1;
  const std::vector<int32_t>& prompt = setup->prompt;
  const std::vector<int32_t>& stop_ids = setup->stop_ids;
  const ImagePrompt& image_prompt = setup->image_prompt;

  const int64_t block = 16;
  auto kv =
      KvCache::create(*backend, kv_cache_options(c, block, (ctx + block - 1) / block, DType::F16));
  if (!kv.ok()) return fail(kv.status());
  ForwardExecutor exec(**model, *backend, **kv);
  exec.set_tensor_parallel((*tp)->tp_comm(), (*tp)->plan().vocab_begin);
  TpDriver drv((*tp)->comm(), exec, **kv);
  if ((*tp)->rank() != 0) {  // workers replay rank 0's steps
    if (!o.test_fault.empty() && (*tp)->rank() == 1) drv.set_fault_before_step(o.test_fault_step);
    Status s = drv.worker_loop();
    if (s.code() == StatusCode::kCancelled) {  // an injected fault: a crashed or wedged rank
      std::fprintf(stderr, "rank 1: %s (%s)\n", s.message().c_str(), o.test_fault.c_str());
      if (o.test_fault == "exit") std::_Exit(3);
      for (;;) pause();
    }
    return s.ok() ? 0 : fail(s);
  }
  struct StopWorkers {  // every return below releases the workers
    TpDriver& d;
    ~StopWorkers() { (void)d.stop(); }
  } stop_workers{drv};
  auto seq_r = drv.add_sequence();
  if (!seq_r.ok()) return fail(seq_r.status());
  const int32_t seq = *seq_r;
  if (Status s = drv.reserve(seq, ctx); !s.ok()) return fail(s);

  Sampler sampler(o.sampling);
#ifdef ARC_RUN_HAS_TOKENIZER
  std::unique_ptr<StreamingDetokenizer> detok;
  if (setup->tok) {
    detok = std::make_unique<StreamingDetokenizer>(*setup->tok, /*skip_special=*/true);
  }
#endif
  nlohmann::json steps = nlohmann::json::array();
  std::vector<int32_t> out;
  std::string text;
  std::vector<int32_t> pos(prompt.size()), seqs(prompt.size(), seq);
  std::iota(pos.begin(), pos.end(), 0);
  ForwardBatch first{prompt, pos, seqs, {}};
  if (setup->images) {
    first.rope_positions = image_prompt.rope_positions;
    first.embd_rows = image_prompt.embd_rows;
    first.embd = *image_prompt.embd;
  }
  auto logits = drv.step(first);
  for (int i = 0; i < o.max_tokens; ++i) {
    if (!logits.ok()) return fail(logits.status());
    const int32_t id = sampler.sample(*logits);
    out.push_back(id);
    if (o.json) {
      nlohmann::json step = {{"id", id}};
      if (o.logprobs > 0) {
        nlohmann::json top = nlohmann::json::array();
        for (const TokenScore& t : top_logprobs(*logits, o.logprobs)) {
          top.push_back({{"id", t.token}, {"logprob", t.logprob}});
        }
        step["top_logprobs"] = top;
      }
      steps.push_back(step);
    }
    const bool stop = std::find(stop_ids.begin(), stop_ids.end(), id) != stop_ids.end();
#ifdef ARC_RUN_HAS_TOKENIZER
    if (detok && !stop) {
      std::string piece = detok->feed(id);
      text += piece;
      if (!o.json) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      }
    }
#endif
    if (stop || i + 1 == o.max_tokens) break;
    const int32_t p = static_cast<int32_t>(prompt.size()) + i;
    ForwardBatch next{std::span(&id, 1), std::span(&p, 1), std::span(&seq, 1), {}};
    // After images, rotary positions run behind the KV positions (arc/mrope.h).
    const int32_t r = static_cast<int32_t>(image_prompt.rope_next) + i;
    const int32_t rope3[3] = {r, r, r};
    if (setup->images) next.rope_positions = std::span(rope3, 3);
    logits = drv.step(next);
  }
#ifdef ARC_RUN_HAS_TOKENIZER
  if (detok) {
    std::string rest = detok->flush();
    text += rest;
    if (!o.json) std::fwrite(rest.data(), 1, rest.size(), stdout);
  }
#endif
  if (o.json) {
    nlohmann::json j = {
        {"prompt_tokens", prompt}, {"tokens", out}, {"text", text}, {"steps", steps}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("\n");
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt (streams as it goes)");
  auto o = std::make_shared<RunOpts>();
  cmd->add_option("--model,-m", o->model, "GGUF model file")->required();
  auto* p = cmd->add_option("--prompt", o->prompt, "prompt text");
  auto* chat = cmd->add_flag("--chat", o->chat,
                             "apply the model's chat template (prompt as the user turn; "
                             "read from stdin without --prompt)");
  auto* ids = cmd->add_option("--prompt-ids", o->prompt_ids, "prompt as token ids: 1,2,3");
  ids->excludes(chat);
  cmd->add_option("--max-tokens,-n", o->max_tokens, "tokens to generate")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--temperature", o->sampling.temperature, "0: greedy")->capture_default_str();
  cmd->add_option("--top-k", o->sampling.top_k)->capture_default_str();
  cmd->add_option("--top-p", o->sampling.top_p)->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", o->sampling.seed)->capture_default_str();
  cmd->add_flag("--json", o->json, "print token ids (and logprobs) as JSON");
  cmd->add_option("--logprobs", o->logprobs, "top-N log-probabilities per step (with --json)")
      ->check(CLI::Range(0, 100));
  cmd->add_option("-t,--threads", o->threads, "threads (0: all CPUs)")->capture_default_str();
  add_backend_flags(cmd, &o->backend);
  cmd->add_option("--image", o->images,
                  "image file (PNG, JPEG, WebP) shown to a vision model before the prompt; "
                  "repeatable");
  cmd->add_option("--mmproj", o->mmproj,
                  "vision projector GGUF (default: an mmproj-*.gguf beside the model)");
  add_tp_flags(cmd, &o->tp, &o->tp_timeout);
  add_moe_split_flag(cmd, &o->moe_split);
  cmd->add_option("--tp-test-fault", o->test_fault)
      ->check(CLI::IsMember({"exit", "hang"}))
      ->group("");
  cmd->add_option("--tp-test-fault-step", o->test_fault_step)->group("");
  cmd->callback([o, p, chat, ids, &ctx] {
    if (p->count() == 0 && ids->count() == 0 && chat->count() == 0) {
      std::fprintf(stderr, "error: give --prompt TEXT, --prompt-ids, or --chat\n");
      ctx.exit_code = 2;
      return;
    }
    ctx.exit_code = run(*o);
  });
}

}  // namespace arc::cli
