// Stop strings across token boundaries: text is held back while its tail could still be the
// start of a stop string, so a stop string split over several tokens is never streamed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace arc {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Adds text; returns what is now safe to emit. After a match, matched() is set and nothing
  // more is emitted (the stop string itself is not part of the output).
  std::string feed(std::string_view text);
  // End of generation: the held tail is no longer ambiguous.
  std::string flush();
  bool matched() const { return matched_; }
  const std::string& matched_stop() const { return matched_stop_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool matched_ = false;
  std::string matched_stop_;
};

}  // namespace arc
