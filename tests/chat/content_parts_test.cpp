// Issue 33: content given as a list of text parts (Claude Code, many SDKs) renders with every
// real template: flattened to one string for templates that call string methods on content,
// kept as parts for templates that need them. Deep values never crash the renderer.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "arc/chat_template.h"

namespace arc {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<fs::path> template_dirs() {
  std::vector<fs::path> out;
  for (const fs::path& root : {fs::path(ARC_TEST_DATA_DIR) / "chat_templates",
                               fs::path(ARC_SHARED_FIXTURES_DIR) / "chat_templates"}) {
    if (!fs::is_directory(root)) continue;
    for (const auto& e : fs::directory_iterator(root)) {
      if (fs::exists(e.path() / "chat_template.jinja")) out.push_back(e.path());
    }
  }
  return out;
}

ChatFormatter formatter_for(const fs::path& dir) {
  auto tpl = ChatTemplate::parse(read_file(dir / "chat_template.jinja"));
  EXPECT_TRUE(tpl.ok()) << dir << ": " << tpl.status().to_string();
  return ChatFormatter(std::move(*tpl), "<s>", "</s>");
}

ChatMessage msg(std::string role, ojson content) {
  ChatMessage m;
  m.role = std::move(role);
  m.content = std::move(content);
  return m;
}

ojson parts(std::initializer_list<const char*> texts) {
  ojson a = ojson::array();
  for (const char* t : texts) a.push_back({{"type", "text"}, {"text", t}});
  return a;
}

TEST(ContentParts, TextPartsRenderWithEveryTemplate) {
  const auto dirs = template_dirs();
  ASSERT_GE(dirs.size(), 4u);
  ChatFormatOptions fo;
  fo.now = 0;
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.string());
    const ChatFormatter f = formatter_for(dir);
    // OpenAI's shape: system and user as parts; Anthropic's after conversion: the same.
    const std::vector<ChatMessage> as_parts = {
        msg("system", parts({"You are terse."})),
        msg("user", parts({"<system-reminder>ctx</system-reminder>", "List the files"})),
        msg("assistant", parts({"a.txt"})), msg("user", parts({"Thanks"}))};
    auto out = f.format(as_parts, fo);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_NE(out->find("List the files"), std::string::npos) << *out;
    EXPECT_NE(out->find("<system-reminder>ctx</system-reminder>"), std::string::npos) << *out;
    EXPECT_EQ(out->find("'type'"), std::string::npos) << "parts printed as a list: " << *out;
    if (!f.requires_typed_content()) {
      // The same prompt as the joined strings (what llama.cpp's server and vLLM send).
      const std::vector<ChatMessage> as_strings = {
          msg("system", "You are terse."),
          msg("user", "<system-reminder>ctx</system-reminder>\nList the files"),
          msg("assistant", "a.txt"), msg("user", "Thanks")};
      auto expected = f.format(as_strings, fo);
      ASSERT_TRUE(expected.ok()) << expected.status().to_string();
      EXPECT_EQ(*out, *expected);
    }
  }
}

TEST(ContentParts, Qwen3NeedsStringsAndGemma3TakesParts) {
  const fs::path data = fs::path(ARC_TEST_DATA_DIR) / "chat_templates";
  EXPECT_FALSE(formatter_for(data / "qwen3").requires_typed_content());
  // Without flattening, Qwen3 fails: "no method 'startswith' on a list".
  auto tpl = ChatTemplate::parse(read_file(data / "qwen3" / "chat_template.jinja"));
  ASSERT_TRUE(tpl.ok());
  ojson ctx = {{"messages", ojson::array({{{"role", "user"}, {"content", parts({"hi"})}}})},
               {"add_generation_prompt", true}};
  ctx["messages"].push_back({{"role", "assistant"}, {"content", parts({"x"})}});
  ctx["messages"].push_back({{"role", "user"}, {"content", parts({"y"})}});
  EXPECT_FALSE(tpl->render(ctx).ok());
  // An image part keeps the list (vision templates iterate it).
  const ChatFormatter gemma = formatter_for(data / "gemma3");
  ojson with_image = parts({"look"});
  with_image.push_back({{"type", "image"}});
  auto ctx2 = gemma.build_context({msg("user", with_image)}, {});
  EXPECT_TRUE(ctx2["messages"][0]["content"].is_array());
  auto ctx3 = gemma.build_context({msg("user", parts({"a", "b"}))}, {});
  if (!gemma.requires_typed_content()) {
    EXPECT_EQ(ctx3["messages"][0]["content"], "a\nb");
  }
}

TEST(ContentParts, DeepToolArgumentsAndValuesDoNotCrash) {
  const ChatFormatter f = formatter_for(fs::path(ARC_TEST_DATA_DIR) / "chat_templates" / "qwen3");
  ChatMessage call = msg("assistant", "");
  ChatToolCall tc;
  tc.name = "f";
  tc.arguments_json = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  call.tool_calls.push_back(tc);
  ChatFormatOptions fo;
  fo.now = 0;
  auto out = f.format({msg("user", "x"), call, msg("user", "y")}, fo);
  EXPECT_TRUE(out.ok()) << out.status().to_string();  // kept as text
  // A value nested past the converter's limit is an error, not a stack overflow.
  ojson deep = 1;
  for (int i = 0; i < 600; ++i) deep = ojson::array({std::move(deep)});
  auto tpl = ChatTemplate::parse("{{ x }}");
  ASSERT_TRUE(tpl.ok());
  EXPECT_FALSE(tpl->render({{"x", deep}}).ok());
}

}  // namespace
}  // namespace arc
