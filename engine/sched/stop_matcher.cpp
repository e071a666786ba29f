#include "sched/stop_matcher.h"

#include <algorithm>
#include <utility>

namespace arc {
namespace {

// Start of the longest suffix of `s` that is a proper prefix of some stop string.
size_t hold_from(const std::string& s, const std::vector<std::string>& stops) {
  size_t hold = s.size();
  for (const auto& stop : stops) {
    const size_t max_len = std::min(s.size(), stop.size() - 1);
    for (size_t len = max_len; len > 0; --len) {
      if (s.compare(s.size() - len, len, stop, 0, len) == 0) {
        hold = std::min(hold, s.size() - len);
        break;
      }
    }
  }
  return hold;
}

// Moves `cut` back to a UTF-8 character boundary so a character is never split.
size_t char_boundary(const std::string& s, size_t cut) {
  while (cut > 0 && cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

std::string StopMatcher::feed(std::string_view text) {
  if (matched_) return {};
  held_.append(text);
  if (stops_.empty()) return std::exchange(held_, {});
  size_t best = std::string::npos;
  for (const auto& stop : stops_) {
    size_t at = held_.find(stop);
    if (at != std::string::npos && at < best) {
      best = at;
      matched_stop_ = stop;
    }
  }
  if (best != std::string::npos) {
    matched_ = true;
    std::string out = held_.substr(0, best);
    held_.clear();
    return out;
  }
  size_t cut = char_boundary(held_, hold_from(held_, stops_));
  std::string out = held_.substr(0, cut);
  held_.erase(0, cut);
  return out;
}

std::string StopMatcher::flush() {
  if (matched_) return {};
  return std::exchange(held_, {});
}

}  // namespace arc
