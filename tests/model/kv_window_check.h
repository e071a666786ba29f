// Windowed KV pool (arc/kv_window.h) against the full pool on a generated gpt-oss model: the
// same script (kv_window_script.h) gives the same logits with either pool, and the scheduler the
// same greedy tokens. Shared by the CPU test and the CUDA one.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "model/kv_window_script.h"
#include "sched/scheduler.h"

namespace arc::testing {

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
  ASSERT_TRUE(window_script(target_of(*full), want).ok());
  const Status s = window_script(target_of(*win), got);
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
