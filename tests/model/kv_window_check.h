// Windowed KV pool (arc/kv_window.h) against the full pool on a generated gpt-oss model: the
// same script of chunked prefills, batched decodes far past the window and prefix reuse gives
// the same logits with either pool. Shared by the CPU test and the CUDA one.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "arc/kv_window.h"
#include "model/test_util.h"
#include "sched/scheduler.h"

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

// One sequence the script drives.
struct Track {
  int32_t seq = -1;
  std::vector<int32_t> tokens;  // prompt, then greedy tokens
  int64_t done = 0;             // positions written
};

// A step: each entry is (track, tokens to run from its `done`); logits of every row kept.
// Reserve and commit as the scheduler does; greedy tokens appended when a track's last
// prompt token (or last generated token) was run.
inline Status run_step(Engine& e, std::vector<std::pair<Track*, int64_t>> parts,
                       std::vector<float>& out) {
  std::vector<int32_t> toks, pos, seqs;
  for (auto& [t, n] : parts) {
    ARC_RETURN_IF_ERROR(e.kv->reserve(t->seq, t->done + n));
    for (int64_t i = 0; i < n; ++i) {
      toks.push_back(t->tokens[static_cast<size_t>(t->done + i)]);
      pos.push_back(static_cast<int32_t>(t->done + i));
      seqs.push_back(t->seq);
    }
  }
  std::vector<int32_t> rows(toks.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  ARC_ASSIGN_OR_RETURN(std::vector<float> logits, e.exec->run({toks, pos, seqs, rows}));
  out.insert(out.end(), logits.begin(), logits.end());
  const int64_t v = e.model->config().n_vocab;
  int64_t row = 0;
  for (auto& [t, n] : parts) {
    row += n;
    t->done += n;
    e.kv->commit(t->seq, t->tokens, t->done);
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

inline Status window_script(Engine& e, ScriptResult& r) {
  Track a{e.kv->add_sequence(), window_prompt(37, 1)};
  Track b{e.kv->add_sequence(), window_prompt(13, 50)};
  ARC_RETURN_IF_ERROR(run_step(e, {{&a, 5}}, r.out));
  ARC_RETURN_IF_ERROR(run_step(e, {{&a, 11}, {&b, 13}}, r.out));
  ARC_RETURN_IF_ERROR(run_step(e, {{&a, 21}}, r.out));
  for (int i = 0; i < 30; ++i) ARC_RETURN_IF_ERROR(run_step(e, {{&b, 1}, {&a, 1}}, r.out));
  e.kv->free_sequence(a.seq);
  auto reuse = [&](int n, int32_t start, int tail, int64_t& reused) {
    std::vector<int32_t> p(a.tokens.begin(), a.tokens.begin() + n);
    for (int32_t t : window_prompt(tail, start)) p.push_back(t);
    Track t{e.kv->add_sequence(), p};
    reused = e.kv->attach_cached_prefix(t.seq, t.tokens);
    t.done = reused;
    return t;
  };
  Track c = reuse(64, 90, 9, r.c_reused);
  const int64_t c_rest = static_cast<int64_t>(c.tokens.size()) - c.done;
  ARC_RETURN_IF_ERROR(run_step(e, {{&b, 1}, {&c, c_rest}}, r.out));
  for (int i = 0; i < 6; ++i) ARC_RETURN_IF_ERROR(run_step(e, {{&c, 1}, {&b, 1}}, r.out));
  e.kv->free_sequence(b.seq);
  e.kv->free_sequence(c.seq);

  Track d = reuse(28, 120, 5, r.d_reused);
  const int64_t v = e.model->config().n_vocab;
  std::vector<float> rows;
  ARC_RETURN_IF_ERROR(run_step(e, {{&d, static_cast<int64_t>(d.tokens.size()) - d.done}}, rows));
  r.tail.assign(rows.end() - v, rows.end());
  for (int i = 0; i < 4; ++i) ARC_RETURN_IF_ERROR(run_step(e, {{&d, 1}}, r.tail));
  e.kv->free_sequence(d.seq);
  return ok_status();
}

// The scheduler over the same model: four greedy requests longer than the window, chunked by a
// small step budget, then two that share a long prefix with the first ones.
inline std::vector<std::vector<int32_t>> window_serve(Engine& e, SchedulerStats& stats) {
  SchedulerOptions so;
  so.max_batch_tokens = 12;
  so.ctx_size = 96;
  so.max_running = 4;
  Scheduler sched(*e.exec, *e.kv, e.model->config().n_vocab, so);
  auto request = [](std::vector<int32_t> prompt) {
    SequenceRequest r;
    r.prompt = std::move(prompt);
    r.sampling.temperature = 0.0f;
    r.sampling.ignore_eos = true;
    r.max_new_tokens = 24;
    return r;
  };
  std::vector<std::vector<int32_t>> out;
  auto collect = [&](std::vector<std::shared_ptr<RequestHandle>> hs) {
    for (auto& h : hs) {
      std::vector<TokenOutput> outs;
      while (h->next(outs, std::chrono::milliseconds(100))) {
      }
      std::vector<int32_t> toks;
      for (const TokenOutput& t : outs) {
        EXPECT_TRUE(t.error.ok()) << t.error.to_string();
        if (!t.finished || t.finish_reason == "length") toks.push_back(t.token);
      }
      out.push_back(toks);
    }
  };
  std::vector<std::shared_ptr<RequestHandle>> hs;
  for (int i = 0; i < 4; ++i) hs.push_back(sched.submit(request(window_prompt(20 + 7 * i, i))));
  collect(hs);
  hs.clear();
  for (int i = 0; i < 2; ++i) {
    std::vector<int32_t> p = window_prompt(20 + 7 * i, i);
    p.insert(p.end(), {9, 8, 7});
    hs.push_back(sched.submit(request(p)));
  }
  collect(hs);
  // The loop updates its figures when it next goes idle.
  stats = sched.stats();
  for (int i = 0; i < 100 && (stats.kv_blocks_used != 0 || stats.kv_window_blocks_used != 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stats = sched.stats();
  }
  return out;
}

// Both checks on one backend: `maker` gives a fresh backend per engine. `tail_tolerance`: how
// far D's logits may move when a different split into steps changes their rounding (the CUDA
// backend's tensor-core prefill rounds queries and keys to F16 for long chunks only).
inline void check_windowed_pool(const BackendMaker& maker, float tail_tolerance) {
  auto full = window_engine(maker, 0);
  ASSERT_TRUE(full.ok()) << full.status().to_string();
  // 12 windowed blocks: A and B hold 3 to 8 each at a time (the window of 8 in blocks of 4, the
  // block being written, a chunk), so released blocks are handed out again many times over.
  auto win = window_engine(maker, 12);
  ASSERT_TRUE(win.ok()) << win.status().to_string();
  ASSERT_NE(win->kv->window(), nullptr);
  ASSERT_EQ(full->kv->window(), nullptr);

  ScriptResult want, got;
  ASSERT_TRUE(window_script(*full, want).ok());
  const Status s = window_script(*win, got);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(want.c_reused, 64);
  EXPECT_EQ(got.c_reused, 64) << "A's last window was still cached";
  ASSERT_EQ(want.out.size(), got.out.size());
  // The same keys in the same order: bit-identical, only their slots differ.
  EXPECT_EQ(0, std::memcmp(want.out.data(), got.out.data(), want.out.size() * sizeof(float)));
  // D: the full pool reuses 28 tokens; the windowed one lost A's window there, so it reuses
  // less (recomputing the rest) and still gets the same logits, up to rounding of the batch.
  EXPECT_EQ(want.d_reused, 28);
  EXPECT_LT(got.d_reused, 28);
  EXPECT_EQ(got.d_reused % kWinBlock, 0);
  ASSERT_EQ(want.tail.size(), got.tail.size());
  float max_diff = 0.0f;
  for (size_t i = 0; i < want.tail.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(want.tail[i] - got.tail[i]));
  }
  EXPECT_LE(max_diff, tail_tolerance) << "D's logits, largest difference";
  EXPECT_EQ(win->kv->window()->n_used(), 0);

  // Through the scheduler, with a windowed pool sized as serve sizes it.
  auto full2 = window_engine(maker, 0);
  ASSERT_TRUE(full2.ok()) << full2.status().to_string();
  auto win2 = window_engine(maker, windowed_pool_blocks(kWindow, kWinBlock, 4, 12, 96));
  ASSERT_TRUE(win2.ok()) << win2.status().to_string();
  SchedulerStats st_full, st_win;
  const auto tokens_full = window_serve(*full2, st_full);
  const auto tokens_win = window_serve(*win2, st_win);
  EXPECT_EQ(tokens_full, tokens_win);
  EXPECT_GT(st_win.prefix_hit_tokens, 0u) << "the shared prefixes were not reused";
  EXPECT_EQ(st_win.prefix_hit_tokens, st_full.prefix_hit_tokens);
  EXPECT_EQ(st_win.kv_window_blocks_total, win2->kv->options().n_swa_blocks);
  EXPECT_EQ(st_win.kv_window_blocks_used, 0);
  EXPECT_EQ(st_win.kv_blocks_used, 0);
  EXPECT_EQ(st_full.kv_window_blocks_total, 0);
}

}  // namespace arc::testing
