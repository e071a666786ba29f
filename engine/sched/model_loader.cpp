// Loading a model for serving: the memory guard first (refuse with the numbers before any
// allocation), then weights (mapped in place and read ahead with progress events), tokenizer,
// chat template, a KV pool sized from what memory is left, and the scheduler.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "arc/backend_caps.h"
#include "arc/backend_factory.h"
#include "arc/kv_window.h"
#include "arc/log.h"
#include "arc/shard_load.h"
#include "arc/shard_plan.h"
#include "arc/tensor_comm.h"
#include "sched/draft_model.h"
#include "sched/engine_service_impl.h"
#include "sched/mmproj_pairing.h"
#include "sched/mtp_drafter.h"

namespace arc {

using nlohmann::json;

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// Tokens that end a turn in the families we run, when the vocabulary has them.
std::vector<int32_t> end_of_turn_tokens(const Tokenizer& tok, const gguf::File& file) {
  std::vector<int32_t> ids;
  auto add = [&](std::optional<int64_t> id) {
    if (id && *id >= 0 && *id < static_cast<int64_t>(tok.vocab_size()) &&
        std::find(ids.begin(), ids.end(), static_cast<int32_t>(*id)) == ids.end()) {
      ids.push_back(static_cast<int32_t>(*id));
    }
  };
  if (auto e = tok.eos_id()) add(*e);
  add(file.get_int("tokenizer.ggml.eot_token_id"));
  add(file.get_int("tokenizer.ggml.eom_token_id"));
  for (const char* piece :
       {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|endoftext|>", "<|return|>",
        "<|call|>", "<end_of_turn>", "<｜end▁of▁sentence｜>", "</s>",
        // GLM-4.5/4.6 end a reply by opening the next turn (a user or a tool result).
        "<|user|>", "<|observation|>"}) {
    if (auto id = tok.find_token(piece)) add(*id);
  }
  return ids;
}

// Pre-faults the weights (the page cache fills once, here, instead of during the first
// requests) and reports progress as load events.
Status read_ahead(EngineService::Impl& m, const gguf::File& file, const std::string& path) {
  uint64_t total = 0;
  for (size_t i = 0; i < file.n_files(); ++i) {
    if (const MappedFile* f = file.mapping(static_cast<uint32_t>(i))) total += f->size();
  }
  uint64_t done = 0;
  const size_t chunk = 64u << 20;
  auto last_emit = Clock::now();
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < file.n_files(); ++i) {
    const MappedFile* f = file.mapping(static_cast<uint32_t>(i));
    if (f == nullptr) continue;
    for (size_t off = 0; off < f->size(); off += chunk) {
      const size_t len = std::min(chunk, f->size() - off);
      f->advise_willneed(off, len);
      for (size_t p = 0; p < len; p += 4096) sink = sink + f->data()[off + p];
      done += len;
      if (Clock::now() - last_emit > std::chrono::milliseconds(200) || done == total) {
        last_emit = Clock::now();
        m.emit("load_progress",
               {{"model", path}, {"rank", 0}, {"bytes_done", done}, {"bytes_total", total}});
      }
      if (m.cancel_load) return cancelled("the load of " + path + " was cancelled");
    }
  }
  return ok_status();
}

// Activations for one step of max_batch_tokens, and logits for up to max_parallel rows.
uint64_t workspace_bytes(const EngineOptions& opt, int max_parallel, const ModelConfig& c) {
  return static_cast<uint64_t>(opt.max_batch_tokens) *
             static_cast<uint64_t>(
                 std::max<int64_t>({c.n_embd, c.q_dim(), c.n_ff, c.n_ff_exp * c.n_expert_used}) *
                 8 * 4) +
         static_cast<uint64_t>(std::max<int64_t>(max_parallel, opt.max_batch_tokens)) *
             static_cast<uint64_t>(c.n_vocab) * 4 +
         (64ull << 20);
}

uint64_t kv_bytes_per_token(DType kv_type, const ModelConfig& c) {
  return static_cast<uint64_t>(c.kv_values_per_token()) * (kv_type == DType::F16 ? 2 : 4);
}

// Blocks of the windowed pool for the sliding-window layers (gpt-oss), 0 when the model has
// none. Every rank holds a pool of this size (the step messages carry both tables).
int64_t window_pool_blocks(const EngineOptions& opt, int max_parallel, int64_t ctx_size,
                           const ModelConfig& c) {
  if (sliding_layer_count(c) == 0) return 0;
  const int64_t block = opt.kv_block_size;
  const int64_t full = (ctx_size * max_parallel + block - 1) / block;
  return windowed_pool_blocks(c.sliding_window, block, max_parallel, opt.max_batch_tokens, full);
}

// KV bytes of one full context: full-attention layers over ctx_size, sliding-window ones over
// the windowed pool (all of it: it is allocated whole).
uint64_t min_kv_bytes(DType kv_type, const ModelConfig& c, int64_t ctx_size, int64_t swa_blocks,
                      int64_t block) {
  if (swa_blocks == 0) return kv_bytes_per_token(kv_type, c) * static_cast<uint64_t>(ctx_size);
  return kv_pool_bytes(c, kv_type, ctx_size, swa_blocks * block);
}

// The drafter `spec` asks for, into `so`; what cannot run here runs without speculation and
// says why in the status (spec_note) and the log.
Status start_speculation(LoadedModel& l, const SpecOptions& spec, int64_t draft_kv_tokens,
                         SchedulerOptions& so) {
  const ModelConfig& c = l.model->config();
  if (c.hybrid() && spec.enabled()) {
    // Verification would run drafted tokens through the recurrent layers and keep only the
    // accepted ones: that needs the state rolled back (a snapshot per drafted token).
    l.spec_note =
        "speculative decoding is not supported for qwen3next (hybrid Gated DeltaNet) models: "
        "rejected drafts cannot be rolled back out of the recurrent state yet";
    logger("engine")->warn("--spec {}: {}; decoding without speculation", spec_kind_name(spec.kind),
                           l.spec_note);
    so.spec = l.spec;
    l.info.speculative = spec_kind_name(l.spec.kind);
    return ok_status();
  }
  switch (spec.kind) {
    case SpecKind::kNone:
      break;
    case SpecKind::kNgram:
      so.drafter = std::make_shared<NgramDrafter>();
      l.spec = spec;
      break;
    case SpecKind::kDraftModel: {
      DraftModelOptions o;
      o.path = spec.draft_path;
      o.kv_tokens = draft_kv_tokens;
      o.block_size = l.kv->options().block_size;
      o.kv_type = l.settings.kv_type;
      ARC_ASSIGN_OR_RETURN(auto d, DraftModelDrafter::load(o, *l.backend, l.model->file()));
      logger("engine")->info("speculative decoding with draft model {} ({:.0f} MiB)", d->name(),
                             static_cast<double>(d->weight_bytes()) / (1 << 20));
      so.drafter = std::move(d);
      l.spec = spec;
      break;
    }
    case SpecKind::kMtp: {
      if (c.n_nextn <= 0) {
        l.spec_note =
            "this model has no multi-token-prediction layers; use --spec ngram or "
            "--spec draft:PATH";
        break;
      }
      auto f = gguf::File::open(l.model->file().path());
      if (!f.ok()) return f.status().with_context("the multi-token-prediction layer");
      MtpOptions o;
      o.kv_tokens = l.kv_tokens;
      o.block_size = l.kv->options().block_size;
      o.kv_type = l.settings.kv_type;
      ARC_ASSIGN_OR_RETURN(auto d, MtpDrafter::load(std::move(*f), *l.model, *l.backend, o));
      logger("engine")->info(
          "speculative decoding with the model's multi-token-prediction layer ({:.0f} MiB)",
          static_cast<double>(d->weight_bytes()) / (1 << 20));
      so.drafter = std::move(d);
      l.spec = spec;
      break;
    }
    case SpecKind::kScripted:
      l.spec_note = "the scripted drafter is for tests and bench only";
      break;
  }
  if (!l.spec_note.empty()) {
    logger("engine")->warn("--spec {}: {}; decoding without speculation", spec_kind_name(spec.kind),
                           l.spec_note);
  } else if (spec.enabled()) {
    logger("engine")->info("speculative decoding: {}, k {}", spec_kind_name(spec.kind),
                           spec.adaptive() ? "adaptive up to " + std::to_string(spec.max_k())
                                           : std::to_string(spec.k));
  }
  so.spec = l.spec;
  l.info.speculative = spec_kind_name(l.spec.kind);
  return ok_status();
}

}  // namespace

LoadSettings default_load_settings(const EngineOptions& opt) {
  LoadSettings s;
  s.ctx_size = opt.ctx_size;
  s.kv_type = opt.kv_type;
  s.max_parallel = opt.max_parallel;
  s.reserve_gib = opt.reserve_gib;
  return s;
}

Status check_loadable(EngineService::Impl& m, const std::string& path, const LoadSettings& s,
                      const LoadedModel* current) {
  const int64_t ctx_size = s.ctx_size;
  auto file = gguf::File::open(path);
  if (!file.ok()) return file.status();
  auto config = config_from_gguf(*file);
  if (!config.ok()) return config.status();
  uint64_t weights = file->file_bytes();
  ModelConfig c = *config;
  const int n_ranks = m.tp ? m.tp->comm().size() : 1;
  if (n_ranks > 1) {
    // A model that does not split over this many ranks: the request's problem (400), not an
    // outage.
    auto plan = plan_for_file(*file, n_ranks, 0, m.opt.moe_split);
    if (!plan.ok()) return invalid_argument(plan.status().message());
    weights = shard_weight_bytes(*file, *plan);
    c = plan->local;
  }
  // The memory the weights will take: the host's, or the GPU's (device memory, which on a GB10
  // is the same unified pool). A device that cannot be asked is left to the load itself (after
  // which a failure brings the previous model back).
  uint64_t available = 0;
  if (m.opt.backend == "cpu") {
    available = available_memory_bytes();
  } else if (auto free_b = cuda_free_memory_bytes(m.opt.device); free_b.ok()) {
    available = *free_b;
  }
  if (available == 0) return ok_status();
  const uint64_t freed =
      current != nullptr ? current->weight_bytes + current->kv_bytes : uint64_t{0};
  const uint64_t reserve = static_cast<uint64_t>(s.reserve_gib * (1ull << 30));
  const uint64_t min_kv =
      min_kv_bytes(s.kv_type, c, ctx_size, window_pool_blocks(m.opt, s.max_parallel, ctx_size, c),
                   m.opt.kv_block_size);
  const uint64_t workspace = workspace_bytes(m.opt, s.max_parallel, c);
  const uint64_t need = weights + min_kv + workspace + reserve;
  if (need > available + freed) {
    return out_of_range(
        "the model does not fit: it needs " + gib(static_cast<double>(need)) + " (weights " +
        gib(static_cast<double>(weights)) + ", KV for " + std::to_string(ctx_size) + " tokens " +
        gib(static_cast<double>(min_kv)) + ", workspace " + gib(static_cast<double>(workspace)) +
        ", reserve " + gib(static_cast<double>(reserve)) + ") but " +
        gib(static_cast<double>(available + freed)) + " is available" +
        (freed > 0 ? " once the loaded model is unloaded" : "") +
        ". Use a smaller quantization, a shorter ctx_size, more boxes, or free memory");
  }
  return ok_status();
}

bool unload_model(EngineService::Impl& m) {
  std::shared_ptr<LoadedModel> old;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    old = std::move(m.loaded);
  }
  if (!old) return false;
  old->shutdown();
  return true;
}

Result<std::shared_ptr<LoadedModel>> load_model(EngineService::Impl& m, const std::string& path,
                                                const LoadSettings& settings) {
  const int64_t ctx_size = settings.ctx_size;
  const std::string& mmproj = settings.mmproj;
  auto l = std::make_shared<LoadedModel>();
  l->settings = settings;
  auto file = gguf::File::open(path);
  if (!file.ok()) return file.status();
  // Weights in memory: the whole file on one rank, about 1/N of it per rank with N.
  uint64_t file_bytes = file->file_bytes();

  // Memory guard. On the CPU weights are copied into host memory (or, with --mmap, held by the
  // page cache of the mapping, which on a unified-memory box is the same memory the GPU and the
  // OS use), so they count in full. On a GPU they are copied into device memory, whose free
  // bytes are what counts (on GB10 the same DRAM).
  BackendOptions bo;
  bo.kind = m.opt.backend;
  bo.device = m.opt.device;
  bo.threads = m.opt.threads;
  bo.mmap_weights = m.opt.mmap_weights;
  auto backend = make_backend(bo);
  if (!backend.ok()) return backend.status();
  l->backend = std::move(*backend);
  auto* device = dynamic_cast<DeviceReport*>(l->backend.get());
  // Several ranks: the plan is checked before anything is sent to the others (a refusal names
  // the rank counts that work). This rank then holds about 1/N of the weights, and its KV pool
  // holds its KV heads; every rank gets the same block count. The shard is read from the file
  // at the end (on a GPU only this rank's bytes are read into device buffers).
  const int n_ranks = m.tp ? m.tp->comm().size() : 1;
  l->n_ranks = n_ranks;
  ShardPlan plan;
  if (n_ranks > 1) {
    ARC_ASSIGN_OR_RETURN(plan, plan_for_file(*file, n_ranks, 0, m.opt.moe_split));
    l->tp_split = plan.describe();
    file_bytes = shard_weight_bytes(*file, plan);
  }
  uint64_t available = available_memory_bytes();
  if (device != nullptr) {
    auto free_bytes = device->free_memory_bytes();
    if (!free_bytes.ok()) return free_bytes.status();
    available = *free_bytes;
  }
  const uint64_t reserve = static_cast<uint64_t>(settings.reserve_gib * (1ull << 30));
  // Copying weights (a GPU; the CPU unless --mmap) allocates them: refuse before, not halfway
  // through (on the CPU the kernel's OOM killer would end the engine instead).
  const bool copies = device != nullptr || dynamic_cast<WeightStreamer*>(l->backend.get());
  if (copies && available > 0 && file_bytes + reserve > available) {
    return resource_exhausted(
        "the model's weights (" + gib(static_cast<double>(file_bytes)) + ") and the reserve (" +
        gib(static_cast<double>(reserve)) + ") do not fit in the " +
        gib(static_cast<double>(available)) + " free on " +
        (device != nullptr ? device->device_description() : std::string("this machine")));
  }
  ModelLoadOptions lo;
  auto last_emit = Clock::now();
  lo.progress = [&](uint64_t done, uint64_t total) {
    if (Clock::now() - last_emit > std::chrono::milliseconds(200) || done == total) {
      last_emit = Clock::now();
      m.emit("load_progress",
             {{"model", path}, {"rank", 0}, {"bytes_done", done}, {"bytes_total", total}});
    }
    return !m.cancel_load;  // false stops the read: kCancelled
  };
  if (n_ranks == 1) {
    auto whole = Model::from_file(std::move(*file), *l->backend, lo);
    if (!whole.ok()) return whole.status();
    l->model = std::move(*whole);
  }
  const ModelConfig c = n_ranks > 1 ? plan.local : l->model->config();
  // The vision projector (given, or paired from beside a vision model) counts in the guard: its
  // weights and the encoder's activations for the largest image.
  // With several ranks only rank 0 holds it (it encodes images and sends the encoder's output
  // with each step): the workers' load message does not name it.
  std::string mm = mmproj == "none" ? "" : mmproj;
  if (mm.empty() && mmproj != "none" && c.mrope()) mm = find_paired_mmproj(path, c);
  std::optional<gguf::File> mm_file;
  uint64_t vision_bytes = 0;
  if (!mm.empty()) {
    if (!c.mrope()) {
      return invalid_argument("--mmproj was given but " + std::string(family_name(c.family)) +
                              " models take no images (vision families: qwen3vlmoe)");
    }
    auto vf = gguf::File::open(mm);
    if (!vf.ok()) return vf.status().with_context("vision projector " + mm);
    auto vc = vision::vision_config_from_gguf(*vf);
    if (!vc.ok()) return vc.status();
    if (vc->proj_dim != c.n_embd || vc->n_deepstack() != c.n_deepstack) {
      return invalid_argument("the vision projector " + mm + " does not fit this model: it " +
                              "outputs " + std::to_string(vc->proj_dim) + " values with " +
                              std::to_string(vc->n_deepstack()) + " deepstack layers, the model " +
                              "takes " + std::to_string(c.n_embd) + " with " +
                              std::to_string(c.n_deepstack) + "; use the mmproj made for it");
    }
    const uint64_t patches = 16384;  // VisionEncoder's largest image
    vision_bytes = vf->file_bytes() +
                   patches * static_cast<uint64_t>(7 * vc->n_embd + vc->n_ff) * sizeof(float);
    mm_file.emplace(std::move(*vf));
  }
  // With a windowed pool for the sliding-window layers, per token of the main pool only the
  // full-attention layers count; the windowed pool has a fixed size.
  const int64_t block = m.opt.kv_block_size;
  const int64_t swa_blocks = window_pool_blocks(m.opt, settings.max_parallel, ctx_size, c);
  const uint64_t swa_bytes =
      swa_blocks > 0 ? kv_pool_bytes(c, settings.kv_type, 0, swa_blocks * block) : 0;
  const uint64_t kv_per_token = swa_blocks > 0 ? kv_pool_bytes(c, settings.kv_type, 1, 0)
                                               : kv_bytes_per_token(settings.kv_type, c);
  const uint64_t workspace = workspace_bytes(m.opt, settings.max_parallel, c);
  // Hybrid models: a recurrent state slot per parallel sequence and prefix-cache snapshots of
  // it (two per parallel sequence, at least 8): a fixed size, allocated with the KV cache.
  RecurrentStateOptions state_opt;
  if (c.hybrid()) {
    state_opt.n_layers = c.n_recurrent_layers();
    state_opt.conv_floats = c.ssm_conv_state_floats();
    state_opt.delta_floats = c.ssm_delta_state_floats();
    state_opt.n_seqs = settings.max_parallel;
    state_opt.n_snapshots = std::max<int64_t>(8, 2 * settings.max_parallel);
  }
  const uint64_t state_bytes = c.hybrid() ? state_opt.bytes() : 0;
  const uint64_t min_kv = kv_per_token * static_cast<uint64_t>(ctx_size) + swa_bytes + state_bytes;
  // Speculative decoding with a draft model: its weights and a KV pool of one full context per
  // parallel sequence count like the model's own.
  ARC_ASSIGN_OR_RETURN(const SpecOptions spec, parse_spec(m.opt.spec, m.opt.spec_k));
  const int64_t draft_kv_tokens = ctx_size * settings.max_parallel;
  uint64_t draft_bytes = 0;
  if (spec.kind == SpecKind::kDraftModel) {
    auto b = draft_model_bytes(spec.draft_path, draft_kv_tokens, settings.kv_type);
    if (!b.ok()) return b.status().with_context("the draft model (--spec draft:PATH)");
    draft_bytes = *b;
  }
  if (spec.kind == SpecKind::kMtp) {
    // The nextn block's K/V for the whole pool (one layer) and its weights when copied. With
    // several ranks rank 0 runs the block whole (model_mtp.cpp), with the whole head when the
    // target's is split by vocabulary and not tied to the embedding every rank keeps whole.
    // (Several ranks: the file is not yet in a model, load_model_shard takes it below.)
    const gguf::File& mf = n_ranks > 1 ? *file : l->model->file();
    draft_bytes = mtp_bytes(mf, n_ranks > 1 ? plan.full : c, draft_kv_tokens, settings.kv_type);
    const gguf::TensorInfo* head = mf.find_tensor("output.weight");
    if (n_ranks > 1 && c.n_nextn > 0 && head != nullptr) draft_bytes += head->n_bytes;
  }
  vision_bytes += draft_bytes;
  if (available > 0) {
    const uint64_t need = file_bytes + vision_bytes + workspace + min_kv + reserve;
    if (need > available) {
      return resource_exhausted(
          "the model does not fit: it needs " + gib(static_cast<double>(need)) + " (weights " +
          gib(static_cast<double>(file_bytes)) + ", KV for " + std::to_string(ctx_size) +
          " tokens " + gib(static_cast<double>(min_kv)) + ", workspace " +
          gib(static_cast<double>(workspace)) + ", reserve " + gib(static_cast<double>(reserve)) +
          ") but " + gib(static_cast<double>(available)) +
          " is available. Use a smaller quantization, a shorter --ctx-size, more boxes, or free "
          "memory");
    }
  }
  // The KV pool takes what is left, up to ctx_size for each parallel sequence.
  uint64_t left = available > 0 ? available - file_bytes - vision_bytes - workspace - reserve -
                                      swa_bytes - state_bytes
                                : kv_per_token * static_cast<uint64_t>(ctx_size) *
                                      static_cast<uint64_t>(settings.max_parallel);
  int64_t kv_tokens = static_cast<int64_t>(
      std::min<uint64_t>(left / std::max<uint64_t>(kv_per_token, 1),
                         static_cast<uint64_t>(ctx_size) * settings.max_parallel));
  kv_tokens = std::max(kv_tokens, ctx_size);
  KvCacheOptions kvo = with_windowed_pool(
      kv_cache_options(c, block, (kv_tokens + block - 1) / block, settings.kv_type), c, swa_blocks);
  if (c.hybrid()) {
    kvo.state_seqs = state_opt.n_seqs;
    kvo.state_snapshots = state_opt.n_snapshots;
  }
  auto kv = KvCache::create(*l->backend, kvo);
  if (!kv.ok()) return kv.status();
  l->kv = std::move(*kv);
  l->kv_tokens = kvo.n_blocks * block;
  l->kv_bytes = kv_per_token * static_cast<uint64_t>(l->kv_tokens) + swa_bytes + state_bytes;
  l->kv_window_bytes = swa_bytes;

  // Streamed weights were read (and reported) while loading; mapped ones are pre-faulted here.
  // Several ranks: each touches only its shard while sharding (pre-faulting the whole file
  // would pull every byte of a model that does not fit one box into its page cache).
  if (n_ranks == 1 && dynamic_cast<WeightStreamer*>(l->backend.get()) == nullptr) {
    ARC_RETURN_IF_ERROR(read_ahead(m, l->model->file(), path));
  }

  const gguf::File& f = n_ranks > 1 ? *file : l->model->file();  // read before the shard loads
  auto tok = Tokenizer::from_gguf(f);
  if (!tok.ok()) return tok.status().with_context("the model's tokenizer");
  l->tokenizer = std::move(*tok);
  if (auto tpl_src = f.get_string("tokenizer.chat_template")) {
    auto tpl = ChatTemplate::parse(*tpl_src);
    if (tpl.ok()) {
      std::string bos =
          l->tokenizer->bos_id() ? std::string(l->tokenizer->piece(*l->tokenizer->bos_id())) : "";
      std::string eos =
          l->tokenizer->eos_id() ? std::string(l->tokenizer->piece(*l->tokenizer->eos_id())) : "";
      l->formatter.emplace(std::move(*tpl), bos, eos);
      l->syntax = output_syntax_for_template(*tpl_src);
      logger("engine")->info("chat template: tool calls and reasoning read as '{}'",
                             output_syntax_name(l->syntax));
    } else {
      logger("engine")->warn(
          "the model's chat template does not parse ({}); chat requests "
          "will be refused, completions still work",
          tpl.status().message());
    }
  }
  l->stop_tokens = end_of_turn_tokens(*l->tokenizer, f);
  if (mm_file) {
    // The encoder runs on a backend of the model's kind (the GPU when the model is there), its
    // own instance: images are encoded on request threads while the scheduler steps the model.
    // Before the other ranks are told to load: nothing may fail here once they hold the model.
    auto pad = l->tokenizer->find_token("<|image_pad|>");
    if (!pad) {
      return invalid_argument("the model's vocabulary has no <|image_pad|> token for images");
    }
    BackendOptions vbo = bo;
    vbo.cuda_graphs = false;
    auto vbe = make_backend(vbo);
    if (!vbe.ok()) return vbe.status().with_context("the vision encoder's backend");
    auto enc = vision::VisionEncoder::from_file(std::move(*mm_file), std::move(*vbe));
    if (!enc.ok()) return enc.status();
    l->image_pad_id = static_cast<int32_t>(*pad);
    l->vision = std::move(*enc);
    l->mmproj_path = mm;
    logger("engine")->info("vision projector {}", mm);
  }

  SchedulerOptions so;
  so.ctx_size = ctx_size;
  so.max_batch_tokens = m.opt.max_batch_tokens;
  so.max_running = settings.max_parallel;
  if (n_ranks > 1) {
    // Last, so that nothing fails on rank 0 once the workers hold the model: they load their
    // shards while this rank loads its own. Each phase ends with every rank's outcome (the
    // first: every rank's memory guard, this one's passed above), so all ranks drop the model
    // together when one fails, and the error names the failed ranks.
    TpModelSpec spec{path,      kvo.n_blocks,     kvo.n_swa_blocks,
                     block,     settings.kv_type, m.opt.backend,
                     workspace, reserve,          m.opt.moe_split};
    ARC_RETURN_IF_ERROR(m.tp->begin_load(spec).with_context("ranks"));
    ARC_RETURN_IF_ERROR(m.tp->gather(ok_status()));
    auto shard = load_model_shard(std::move(*file), *l->backend, plan, lo);
    ARC_RETURN_IF_ERROR(m.tp->finish_load(shard.ok() ? ok_status() : shard.status()));
    l->model = std::move(*shard);
    auto tc = make_tensor_communicator(
        m.tp->comm(), *l->backend,
        std::chrono::milliseconds(static_cast<int64_t>(m.opt.tp_abort_grace_s * 1000)));
    ARC_RETURN_IF_ERROR(m.tp->gather(tc.ok() ? ok_status() : tc.status()));
    l->tensor_comm = std::move(*tc);
    m.emit("load_progress",
           {{"model", path}, {"rank", 0}, {"bytes_done", file_bytes}, {"bytes_total", file_bytes}});
  }
  l->weight_bytes = l->model->weight_bytes();
  l->exec = std::make_unique<ForwardExecutor>(*l->model, *l->backend, *l->kv);
  if (n_ranks > 1) {
    l->exec->set_tensor_parallel(l->tensor_comm ? l->tensor_comm.get() : &m.tp->comm(),
                                 plan.vocab_begin);
    l->tp_driver = std::make_unique<TpDriver>(m.tp->comm(), *l->exec, *l->kv);
    // tp_send_mu: a probe or link test (engine_cluster.cpp) goes between steps, never inside.
    so.forward = [d = l->tp_driver.get(), mu = &l->tp_send_mu](const ForwardBatch& b) {
      std::lock_guard<std::mutex> lock(*mu);
      return d->step(b);
    };
  }
  ARC_RETURN_IF_ERROR(start_speculation(*l, spec, draft_kv_tokens, so));
  l->scheduler = std::make_unique<Scheduler>(*l->exec, *l->kv, c.n_vocab, so);

  l->info.path = path;
  l->info.id = l->model->file()
                   .get_string("general.name")
                   .value_or(std::filesystem::path(path).stem().string());
  l->info.architecture = l->model->file().architecture();
  l->info.context_length = ctx_size;
  l->info.tools = l->formatter.has_value() &&
                  l->formatter->chat_template().source().find("tool") != std::string::npos;
  l->info.reasoning =
      l->formatter.has_value() &&
      (l->formatter->chat_template().source().find("<think>") != std::string::npos ||
       l->syntax == OutputSyntax::kGptOss);
  l->info.vision = l->vision != nullptr;
  return l;
}

}  // namespace arc
