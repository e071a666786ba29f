// The real chat templates against the reference renderer's output (@huggingface/jinja),
// byte for byte; cases where the reference raised must raise. The fixtures are copied into
// tests/data/chat_templates so they always run; the shared copy is checked too when present.
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <gtest/gtest.h>

#include "arc/chat_template.h"

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void check_family(const fs::path& dir) {
  auto tpl = arc::ChatTemplate::parse(read_file(dir / "chat_template.jinja"));
  ASSERT_TRUE(tpl.ok()) << dir << ": " << tpl.status().to_string();
  auto cases = nlohmann::ordered_json::parse(read_file(dir / "cases.json"));
  ASSERT_FALSE(cases["cases"].empty());
  // strftime_now() returns the fixture's fixed date ("now": "YYYY-MM-DD", UTC midnight).
  std::optional<std::time_t> now;
  if (cases.contains("now")) {
    std::tm tm{};
    std::istringstream in(cases["now"].get<std::string>());
    in >> std::get_time(&tm, "%Y-%m-%d");
    ASSERT_FALSE(in.fail()) << cases["now"];
    now = timegm(&tm);
  }
  for (const auto& c : cases["cases"]) {
    SCOPED_TRACE(dir.filename().string() + "/" + c["name"].get<std::string>());
    auto out = tpl->render(c["context"], now);
    if (c.contains("error")) {
      ASSERT_FALSE(out.ok()) << "reference raised: " << c["error"];
      EXPECT_NE(out.status().message().find(c["error"].get<std::string>()), std::string::npos)
          << out.status().message();
    } else {
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      EXPECT_EQ(*out, c["rendered"].get<std::string>());
    }
  }
}

class ChatTemplateFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(ChatTemplateFixture, LocalCopyRendersByteForByte) {
  check_family(fs::path(ARC_TEST_DATA_DIR) / "chat_templates" / GetParam());
}

TEST_P(ChatTemplateFixture, SharedFixtureRendersByteForByte) {
  fs::path dir = fs::path(ARC_SHARED_FIXTURES_DIR) / "chat_templates" / GetParam();
  if (!fs::exists(dir)) GTEST_SKIP() << "shared fixtures absent: " << dir;
  check_family(dir);
}

INSTANTIATE_TEST_SUITE_P(Families, ChatTemplateFixture,
                         ::testing::Values("qwen3", "llama3", "deepseek_v3", "gemma3", "gptoss",
                                           "glm46", "minimax_m2", "deepseek_v31", "kimi_k2",
                                           "qwen3_coder"));

}  // namespace
