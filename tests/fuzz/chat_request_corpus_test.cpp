// Regression run of the chat request fuzzer's corpus (tests/data/chat_request_corpus) in the
// default build: every seed, including the inputs the fuzzer once crashed on (crash_*), must be
// handled, and the nasty seeds (bad_*) must be refused with a 4xx, never a 500.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "chat_request_fuzz.h"

namespace arc::fuzz {
namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(ChatRequestCorpus, EverySeedIsHandled) {
  const std::filesystem::path dir =
      std::filesystem::path(ARC_TEST_DATA_DIR) / "chat_request_corpus";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  ASSERT_EQ(fuzz_formatters().size(), 4u);
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const std::string body = read_all(entry.path());
    run_chat_request_input(body);
    ++n;
    if (name.rfind("valid_", 0) == 0) {
      EXPECT_TRUE(server::parse_body(body).ok()) << name;
    }
    if (name.rfind("bad_", 0) == 0) {
      // Refused by at least the parse or one dialect, always as a client error.
      auto parsed = server::parse_body(body);
      if (!parsed.ok()) {
        EXPECT_EQ(server::http_status_for(parsed.status()), 400) << parsed.status().message();
        continue;
      }
      auto chat = server::parse_openai_chat(*parsed);
      auto msgs = server::parse_anthropic_messages(*parsed, false);
      EXPECT_FALSE(chat.ok() && msgs.ok()) << name;
      if (!chat.ok()) EXPECT_LT(server::http_status_for(chat.status()), 500);
      if (!msgs.ok()) EXPECT_LT(server::http_status_for(msgs.status()), 500);
    }
  }
  EXPECT_GE(n, 20);
}

}  // namespace
}  // namespace arc::fuzz
