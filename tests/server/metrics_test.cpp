#include "arc/metrics.h"

#include <gtest/gtest.h>

namespace arc {
namespace {

TEST(Metrics, RendersPrometheusText) {
  MetricsRegistry m;
  m.add_counter("arclight_prompt_tokens_total", "Prompt tokens processed");
  m.add_gauge("arclight_memory_bytes", "Memory per rank");
  m.add_histogram("arclight_ttft_seconds", "Time to first token", {0.1, 1.0});
  m.inc("arclight_prompt_tokens_total", 12);
  m.inc("arclight_prompt_tokens_total", 3);
  m.set("arclight_memory_bytes", 1024, {{"rank", "0"}});
  m.set("arclight_memory_bytes", 2048, {{"rank", "1"}});
  m.observe("arclight_ttft_seconds", 0.05);
  m.observe("arclight_ttft_seconds", 0.5);
  m.observe("arclight_ttft_seconds", 5);
  EXPECT_EQ(m.value("arclight_prompt_tokens_total"), 15);
  EXPECT_EQ(m.histogram_count("arclight_ttft_seconds"), 3u);
  std::string text = m.render();
  EXPECT_NE(
      text.find("# TYPE arclight_prompt_tokens_total counter\narclight_prompt_tokens_total 15\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("arclight_memory_bytes{rank=\"1\"} 2048\n"), std::string::npos);
  // Buckets are cumulative and end with +Inf equal to the count.
  EXPECT_NE(text.find("arclight_ttft_seconds_bucket{le=\"0.10000000000000001\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("arclight_ttft_seconds_bucket{le=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("arclight_ttft_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("arclight_ttft_seconds_sum 5.5499999999999998\n"), std::string::npos) << text;
  EXPECT_NE(text.find("arclight_ttft_seconds_count 3\n"), std::string::npos);
}

TEST(Metrics, LabelValuesAreEscaped) {
  MetricsRegistry m;
  m.add_gauge("g", "help");
  m.set("g", 1, {{"path", "a\"b\\c\nd"}});
  EXPECT_NE(m.render().find("g{path=\"a\\\"b\\\\c\\nd\"} 1"), std::string::npos);
}

}  // namespace
}  // namespace arc
