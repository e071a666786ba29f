// Windowed KV pool (arc/kv_window.h): a script of chunked prefills across the sliding window,
// batched decodes far past it and prefix reuse on a generated gpt-oss model, run against any
// forward (one rank's executor, or tensor-parallel ranks). Used by kv_window_check.h and the
// tensor-parallel test.
#pragma once

#include <algorithm>
#include <functional>

#include "arc/kv_window.h"
#include "model/test_util.h"

namespace arc::testing {

constexpr int64_t kWinBlock = 4;  // block size
constexpr int64_t kWindow = 8;    // the model's sliding window

inline TestModelOptions window_model() {
  TestModelOptions o = tiny_model({"", Family::kGptOss, 8, "F32"});
  o.n_layer = 4;  // two sliding-window layers, two full ones
  o.sliding_window = kWindow;
  return o;
}

using BackendMaker = std::function<Result<std::unique_ptr<Backend>>()>;

// An engine over the gpt-oss model; n_swa_blocks > 0: with a windowed pool of that many blocks.
inline Result<Engine> window_engine(const BackendMaker& backend, int64_t n_swa_blocks) {
  Engine e;
  ARC_ASSIGN_OR_RETURN(e.bytes, build_test_model(window_model()));
  ARC_ASSIGN_OR_RETURN(e.backend, backend());
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::parse(e.bytes, "test-model"));
  ARC_ASSIGN_OR_RETURN(e.model, Model::from_file(std::move(f), *e.backend));
  const ModelConfig& c = e.model->config();
  const KvCacheOptions kvo =
      with_windowed_pool(kv_cache_options(c, kWinBlock, 96, DType::F16), c, n_swa_blocks);
  ARC_ASSIGN_OR_RETURN(e.kv, KvCache::create(*e.backend, kvo));
  e.exec = std::make_unique<ForwardExecutor>(*e.model, *e.backend, *e.kv);
  return e;
}

// What the script drives: a KV cache, and a forward over it (an executor, or under tensor
// parallelism rank 0's TpDriver::step).
struct ScriptTarget {
  KvCache& kv;
  int64_t n_vocab = 0;
  std::function<Result<std::vector<float>>(const ForwardBatch&)> run;
};

inline ScriptTarget target_of(Engine& e) {
  return {*e.kv, e.model->config().n_vocab, [&e](const ForwardBatch& b) { return e.exec->run(b); }};
}

// One sequence the script drives.
struct Track {
  int32_t seq = -1;
  std::vector<int32_t> tokens;  // prompt, then greedy tokens
  int64_t done = 0;             // positions written
};

// A step: each entry is (track, tokens to run from its `done`); logits of every row kept.
// Reserve and commit as the scheduler does; greedy tokens appended when a track's last
// prompt token (or last generated token) was run.
inline Status run_step(ScriptTarget& e, std::vector<std::pair<Track*, int64_t>> parts,
                       std::vector<float>& out) {
  std::vector<int32_t> toks, pos, seqs;
  for (auto& [t, n] : parts) {
    ARC_RETURN_IF_ERROR(e.kv.reserve(t->seq, t->done + n));
    for (int64_t i = 0; i < n; ++i) {
      toks.push_back(t->tokens[static_cast<size_t>(t->done + i)]);
      pos.push_back(static_cast<int32_t>(t->done + i));
      seqs.push_back(t->seq);
    }
  }
  std::vector<int32_t> rows(toks.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  ARC_ASSIGN_OR_RETURN(std::vector<float> logits, e.run({toks, pos, seqs, rows}));
  out.insert(out.end(), logits.begin(), logits.end());
  const int64_t v = e.n_vocab;
  int64_t row = 0;
  for (auto& [t, n] : parts) {
    row += n;
    t->done += n;
    e.kv.commit(t->seq, t->tokens, t->done);
    if (t->done == static_cast<int64_t>(t->tokens.size())) {
      const float* l = logits.data() + (row - 1) * v;
      t->tokens.push_back(static_cast<int32_t>(std::max_element(l, l + v) - l));
    }
  }
  return ok_status();
}

inline std::vector<int32_t> window_prompt(int n, int32_t start) {
  std::vector<int32_t> p(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<size_t>(i)] = (start + 37 * i) % 250 + 3;
  return p;
}

// The script: A (37 tokens) in chunks of 5, 11 and 21 (each crossing the window), B (13 tokens)
// in one chunk batched with A's second; 30 decode steps of both together; A ends and C (A's
// first 64 tokens and a new tail) reuses A's prefix far past the window, prefills its tail
// batched with B's decodes and decodes 6 steps with B. Every logit row goes to `out`. Then D
// (A's first 28 tokens and a tail): with the windowed pool, A's window at 28 has long been
// evicted, so less is reused; D's last prompt row and 4 decode rows go to `tail`.
struct ScriptResult {
  std::vector<float> out, tail;
  int64_t c_reused = -1, d_reused = -1;
};

inline Status window_script(ScriptTarget e, ScriptResult& r) {
  Track a{e.kv.add_sequence(), window_prompt(37, 1)};
  Track b{e.kv.add_sequence(), window_prompt(13, 50)};
  ARC_RETURN_IF_ERROR(run_step(e, {{&a, 5}}, r.out));
  ARC_RETURN_IF_ERROR(run_step(e, {{&a, 11}, {&b, 13}}, r.out));
  ARC_RETURN_IF_ERROR(run_step(e, {{&a, 21}}, r.out));
  for (int i = 0; i < 30; ++i) ARC_RETURN_IF_ERROR(run_step(e, {{&b, 1}, {&a, 1}}, r.out));
  e.kv.free_sequence(a.seq);
  auto reuse = [&](int n, int32_t start, int tail, int64_t& reused) {
    std::vector<int32_t> p(a.tokens.begin(), a.tokens.begin() + n);
    for (int32_t t : window_prompt(tail, start)) p.push_back(t);
    Track t{e.kv.add_sequence(), p};
    reused = e.kv.attach_cached_prefix(t.seq, t.tokens);
    t.done = reused;
    return t;
  };
  Track c = reuse(64, 90, 9, r.c_reused);
  const int64_t c_rest = static_cast<int64_t>(c.tokens.size()) - c.done;
  ARC_RETURN_IF_ERROR(run_step(e, {{&b, 1}, {&c, c_rest}}, r.out));
  for (int i = 0; i < 6; ++i) ARC_RETURN_IF_ERROR(run_step(e, {{&c, 1}, {&b, 1}}, r.out));
  e.kv.free_sequence(b.seq);
  e.kv.free_sequence(c.seq);

  Track d = reuse(28, 120, 5, r.d_reused);
  const int64_t v = e.n_vocab;
  std::vector<float> rows;
  ARC_RETURN_IF_ERROR(run_step(e, {{&d, static_cast<int64_t>(d.tokens.size()) - d.done}}, rows));
  r.tail.assign(rows.end() - v, rows.end());
  for (int i = 0; i < 4; ++i) ARC_RETURN_IF_ERROR(run_step(e, {{&d, 1}}, r.tail));
  e.kv.free_sequence(d.seq);
  return ok_status();
}

}  // namespace arc::testing
