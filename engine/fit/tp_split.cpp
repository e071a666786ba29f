// Head padding and whole-block width shares for tensor parallelism (arc/tp_split.h).
#include "arc/tp_split.h"

#include <algorithm>

#include <fmt/format.h>

namespace arc {

Result<HeadSplit> split_heads(int64_t n_head, int64_t n_kv_head, int64_t head_dim, int ranks,
                              int64_t o_block) {
  if (ranks < 1) return invalid_argument("the rank count must be at least 1");
  if (n_head < 1 || n_kv_head < 1 || n_head % n_kv_head != 0) {
    return invalid_argument(
        fmt::format("{} Q heads do not form groups over {} KV heads", n_head, n_kv_head));
  }
  const int64_t group = n_head / n_kv_head;
  o_block = std::max<int64_t>(o_block, 1);
  HeadSplit best;
  bool found = false;
  for (int64_t k = 1; k <= group; ++k) {
    if (group % k != 0) continue;
    HeadSplit h;
    h.n_head = n_head;
    h.n_kv_head = n_kv_head;
    h.ranks = ranks;
    h.kv_copies = k;
    h.slots_per_rank = (n_kv_head * k + ranks - 1) / ranks;
    h.q_per_slot = group / k;
    if ((h.local_q() * head_dim) % o_block != 0) continue;
    // Fewest KV heads per rank first: they set every rank's KV cache (all ranks hold the same
    // block count), which outweighs the weights of a few zero Q heads at any real context.
    const bool better = !found || h.slots_per_rank < best.slots_per_rank ||
                        (h.slots_per_rank == best.slots_per_rank && h.local_q() < best.local_q());
    if (better) best = h;
    found = true;
  }
  if (!found) {
    return failed_precondition(fmt::format(
        "{} attention heads of {} values over {} ranks: no cut gives every rank whole {}-value "
        "blocks of the output projection",
        n_head, head_dim, ranks, o_block));
  }
  return best;
}

Result<HeadSplit> split_latent_heads(int64_t n_head, int64_t v_head_dim, int ranks,
                                     int64_t o_block) {
  if (ranks < 1) return invalid_argument("the rank count must be at least 1");
  if (n_head < 1 || v_head_dim < 1) return invalid_argument("latent attention without heads");
  o_block = std::max<int64_t>(o_block, 1);
  HeadSplit h;
  h.n_head = n_head;
  h.n_kv_head = n_head;  // slots: one per Q head
  h.ranks = ranks;
  h.q_per_slot = 1;
  h.latent = true;
  // At most o_block more heads than the even share make the columns whole blocks, if any do.
  const int64_t even = (n_head + ranks - 1) / ranks;
  for (int64_t q = even; q <= even + o_block; ++q) {
    if ((q * v_head_dim) % o_block == 0) {
      h.slots_per_rank = q;
      return h;
    }
  }
  return failed_precondition(fmt::format(
      "{} attention heads of {} values over {} ranks: no cut gives every rank whole {}-value "
      "blocks of the output projection",
      n_head, v_head_dim, ranks, o_block));
}

bool WidthSplit::even() const {
  for (int r = 1; r < ranks(); ++r) {
    if (count(r) != count(0)) return false;
  }
  return true;
}

double WidthSplit::largest_share() const {
  if (width <= 0) return 0.0;
  int64_t most = 0;
  for (int r = 0; r < ranks(); ++r) most = std::max(most, count(r));
  return static_cast<double>(most) / static_cast<double>(width);
}

Result<WidthSplit> split_width(int64_t width, int64_t unit, int ranks) {
  if (ranks < 1) return invalid_argument("the rank count must be at least 1");
  unit = std::max<int64_t>(unit, 1);
  if (width % unit != 0) {
    return failed_precondition(
        fmt::format("width {} is not whole {}-value quantization blocks", width, unit));
  }
  WidthSplit w;
  w.width = width;
  w.unit = unit;
  w.begin.resize(static_cast<size_t>(ranks) + 1);
  if (width % ranks == 0 && (width / ranks) % unit == 0) {  // even
    for (int r = 0; r <= ranks; ++r) w.begin[r] = width / ranks * r;
    return w;
  }
  const int64_t blocks = width / unit;
  // Rounded up: the ranks that hold one block fewer (or none) are the last ones, so rank 0,
  // which adds the replicated biases, always holds a share.
  for (int r = 0; r <= ranks; ++r) w.begin[r] = (blocks * r + ranks - 1) / ranks * unit;
  return w;
}

std::string describe(const HeadSplit& h) {
  if (h.latent) {
    std::string s =
        fmt::format("heads {} over {} ranks: {} per rank", h.n_head, h.ranks, h.local_q());
    if (h.padded()) s += fmt::format(" ({} zero heads padded)", h.zero_q_heads());
    return s + "; latent KV cache whole on every rank";
  }
  std::string s = fmt::format("heads {} Q / {} KV over {} ranks: {} Q + {} KV heads per rank",
                              h.n_head, h.n_kv_head, h.ranks, h.local_q(), h.slots_per_rank);
  std::string extra;
  if (h.kv_copies > 1) {
    extra = fmt::format("each KV head held {} times", h.kv_copies);
  }
  if (h.padded()) {
    extra += fmt::format("{}{} zero Q heads padded", extra.empty() ? "" : ", ", h.zero_q_heads());
  }
  return extra.empty() ? s : s + " (" + extra + ")";
}

std::string describe(const WidthSplit& w, const std::string& what) {
  std::string parts;
  for (int r = 0; r < w.ranks(); ++r) {
    parts += (r == 0 ? "" : " + ") + std::to_string(w.count(r));
  }
  if (w.even()) {
    return fmt::format("{} {}: {} per rank (even)", what, w.width, w.count(0));
  }
  if (w.unit == 1) {
    return fmt::format("{} {}: {} (uneven, largest rank {:.0f}%)", what, w.width, parts,
                       100.0 * w.largest_share());
  }
  return fmt::format("{} {} in {}-value blocks: {} (uneven whole blocks, largest rank {:.0f}%)",
                     what, w.width, w.unit, parts, 100.0 * w.largest_share());
}

}  // namespace arc
