// ChatFormatter: the context it builds from messages must render the fixture templates exactly as
// the reference did from the fixture's own context; the real tokenizer_config.json templates load
// and render a basic conversation; and the CLI prints exactly the rendered prompt.
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <gtest/gtest.h>

#include "arc/chat_template.h"
#include "arc/gguf.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ChatFormatter, RebuildsFixtureContexts) {
  for (const char* family : {"qwen3", "llama3", "deepseek_v3", "gemma3", "gptoss", "glm46",
                             "minimax_m2", "deepseek_v31", "kimi_k2", "qwen3_coder"}) {
    fs::path dir = fs::path(ARC_TEST_DATA_DIR) / "chat_templates" / family;
    auto tpl = arc::ChatTemplate::parse(read_file(dir / "chat_template.jinja"));
    ASSERT_TRUE(tpl.ok());
    const json cases = json::parse(read_file(dir / "cases.json"));
    std::optional<std::time_t> now;
    if (cases.contains("now")) {
      std::tm tm{};
      std::istringstream in(cases["now"].get<std::string>());
      in >> std::get_time(&tm, "%Y-%m-%d");
      now = timegm(&tm);
    }
    for (const auto& c : cases["cases"]) {
      SCOPED_TRACE(std::string(family) + "/" + c["name"].get<std::string>());
      const json& ctx = c["context"];
      arc::ChatFormatter f(*tpl, ctx["bos_token"].get<std::string>(),
                           ctx["eos_token"].get<std::string>());
      // Reasoning arrives as OpenAI clients send it (reasoning_content), whatever field name the
      // template reads (gpt-oss reads thinking).
      json sent = ctx["messages"];
      for (auto& m : sent) {
        if (m.contains("thinking")) {
          m["reasoning_content"] = m["thinking"];
          m.erase("thinking");
        }
      }
      auto messages = arc::chat_messages_from_json(sent);
      ASSERT_TRUE(messages.ok()) << messages.status().to_string();
      arc::ChatFormatOptions opt;
      opt.add_generation_prompt = ctx["add_generation_prompt"].get<bool>();
      if (ctx.contains("tools")) opt.tools = ctx["tools"];
      if (ctx.contains("enable_thinking")) opt.enable_thinking = ctx["enable_thinking"].get<bool>();
      // Template variables of their own: gpt-oss's reasoning_effort, DeepSeek-V3.1's thinking.
      for (const char* k : {"reasoning_effort", "thinking"}) {
        if (ctx.contains(k)) opt.extra[k] = ctx[k];
      }
      opt.now = now;
      auto out = f.format(*messages, opt);
      if (c.contains("error")) {
        EXPECT_FALSE(out.ok());
      } else {
        ASSERT_TRUE(out.ok()) << out.status().to_string();
        EXPECT_EQ(*out, c["rendered"].get<std::string>());
      }
    }
  }
}

TEST(ChatFormatter, MessagesFromJsonValidates) {
  EXPECT_FALSE(arc::chat_messages_from_json(json::parse(R"({"role": "user"})")).ok());
  EXPECT_FALSE(arc::chat_messages_from_json(json::parse(R"([{"content": "x"}])")).ok());
  EXPECT_FALSE(
      arc::chat_messages_from_json(json::parse(R"([{"role": "user", "content": 5}])")).ok());
  auto m = arc::chat_messages_from_json(json::parse(
      R"([{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
          "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
          {"role": "tool", "tool_call_id": "c1", "content": "ok"},
          {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image"}]}])"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[0].tool_calls[0].arguments_json, "{\"a\": 1}");
  json back = arc::chat_message_to_json((*m)[0]);
  EXPECT_EQ(back["tool_calls"][0]["function"]["arguments"], json::parse("{\"a\": 1}"));
  EXPECT_EQ((*m)[1].tool_call_id, "c1");
  EXPECT_TRUE((*m)[2].content.is_array());
}

TEST(ChatFormatter, ContentPartsReachTheTemplate) {
  // Gemma 3 iterates over content parts; an image part becomes <start_of_image>.
  fs::path dir = fs::path(ARC_TEST_DATA_DIR) / "chat_templates" / "gemma3";
  auto tpl = arc::ChatTemplate::parse(read_file(dir / "chat_template.jinja"));
  ASSERT_TRUE(tpl.ok());
  arc::ChatFormatter f(*tpl, "<bos>", "<eos>");
  auto m = arc::chat_messages_from_json(json::parse(
      R"([{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": " What is this? "}]}])"));
  ASSERT_TRUE(m.ok());
  auto out = f.format(*m, {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(*out,
            "<bos><start_of_turn>user\n<start_of_image>What is "
            "this?<end_of_turn>\n<start_of_turn>model\n");
}

class TokenizerConfigTemplate : public ::testing::TestWithParam<const char*> {};

TEST_P(TokenizerConfigTemplate, RendersABasicConversation) {
  fs::path cfg_path =
      fs::path(ARC_SHARED_FIXTURES_DIR) / "tokenizers" / GetParam() / "tokenizer_config.json";
  if (!fs::exists(cfg_path)) GTEST_SKIP() << "shared fixtures absent: " << cfg_path;
  json cfg = json::parse(read_file(cfg_path));
  auto f = arc::ChatFormatter::from_tokenizer_config(cfg);
  if (!cfg.contains("chat_template")) {
    // gpt-oss ships its (Harmony) template as chat_template.jinja, not in this file.
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), arc::StatusCode::kNotFound);
    GTEST_SKIP() << GetParam() << "/tokenizer_config.json carries no chat_template";
  }
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  auto m = arc::chat_messages_from_json(json::parse(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Cześć!"},
          {"role": "assistant", "content": "Hej."}, {"role": "user", "content": "2+2?"}])"));
  ASSERT_TRUE(m.ok());
  auto out = f->format(*m, {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_NE(out->find("Cześć!"), std::string::npos);
  EXPECT_NE(out->find("2+2?"), std::string::npos);
  EXPECT_EQ(out->rfind(f->bos_token(), 0), 0u)
      << "starts with bos_token '" << f->bos_token() << "'";
}

INSTANTIATE_TEST_SUITE_P(Families, TokenizerConfigTemplate,
                         ::testing::Values("qwen3", "llama3", "deepseek_v3", "gptoss"));

std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

TEST(ChatTemplateCli, PrintsExactlyTheRenderedPrompt) {
  fs::path bin = fs::path(ARC_BIN_DIR) / "arclight-engine";
  if (!fs::exists(bin)) GTEST_SKIP() << "arclight-engine not built: " << bin;
  fs::path dir = fs::path(ARC_TEST_DATA_DIR) / "chat_templates" / "qwen3";
  json c;
  const json cases = json::parse(read_file(dir / "cases.json"));
  for (const auto& x : cases["cases"]) {
    if (x["name"] == "tool_call_roundtrip") c = x;
  }
  ASSERT_FALSE(c.is_null());
  fs::path tmp = fs::temp_directory_path() / ("arc_chat_cli_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  json cfg = {{"chat_template", read_file(dir / "chat_template.jinja")},
              {"eos_token", "<|im_end|>"}};
  std::ofstream(tmp / "tokenizer_config.json") << cfg.dump();
  std::ofstream(tmp / "messages.json") << c["context"]["messages"].dump();
  std::ofstream(tmp / "tools.json") << c["context"]["tools"].dump();
  int status = -1;
  std::string out = run(bin.string() + " chat-template --tokenizer-config " +
                            (tmp / "tokenizer_config.json").string() + " --messages @" +
                            (tmp / "messages.json").string() + " --tools @" +
                            (tmp / "tools.json").string() + " --add-generation-prompt",
                        &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, c["rendered"].get<std::string>());
  // Inline JSON, thinking off: the Qwen3 template closes an empty <think> block.
  out = run(bin.string() + " chat-template --tokenizer-config " +
                (tmp / "tokenizer_config.json").string() +
                " --messages '[{\"role\":\"user\",\"content\":\"hi\"}]' --add-generation-prompt "
                "--enable-thinking false",
            &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  out = run(bin.string() + " chat-template --tokenizer-config " +
                (tmp / "tokenizer_config.json").string() + " --messages '[{\"role\":\"user\"' 2>&1",
            &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("not valid JSON"), std::string::npos) << out;
  fs::remove_all(tmp);
}

}  // namespace

namespace {

// A GGUF carrying the Qwen3 fixture template, with BOS/EOS given by id into the token list.
fs::path write_template_gguf(const fs::path& dir) {
  arc::gguf::Writer w;
  w.set("general.architecture", arc::gguf::Value::str("qwen3"));
  w.set("tokenizer.chat_template",
        arc::gguf::Value::str(read_file(fs::path(ARC_TEST_DATA_DIR) / "chat_templates" / "qwen3" /
                                        "chat_template.jinja")));
  arc::gguf::Array toks;
  toks.elem_type = arc::gguf::ValueType::kString;
  for (const char* t : {"a", "<|endoftext|>", "<|im_end|>"})
    toks.items.push_back(arc::gguf::Value::str(t));
  w.set("tokenizer.ggml.tokens", arc::gguf::Value::array(std::move(toks)));
  w.set("tokenizer.ggml.bos_token_id", arc::gguf::Value::u32(1));
  w.set("tokenizer.ggml.eos_token_id", arc::gguf::Value::u32(2));
  fs::path p = dir / "tpl.gguf";
  EXPECT_TRUE(w.write(p.string()).ok());
  return p;
}

TEST(ChatFormatter, FromGgufMetadata) {
  fs::path tmp = fs::temp_directory_path() / ("arc_chat_gguf_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  fs::path model = write_template_gguf(tmp);
  auto file = arc::gguf::File::open(model.string());
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto f = arc::ChatFormatter::from_gguf(*file);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->bos_token(), "<|endoftext|>");
  EXPECT_EQ(f->eos_token(), "<|im_end|>");
  const json cases = json::parse(
      read_file(fs::path(ARC_TEST_DATA_DIR) / "chat_templates" / "qwen3" / "cases.json"));
  const json& c = cases["cases"][0];
  auto m = arc::chat_messages_from_json(c["context"]["messages"]);
  ASSERT_TRUE(m.ok());
  arc::ChatFormatOptions opt;
  opt.add_generation_prompt = c["context"]["add_generation_prompt"].get<bool>();
  auto out = f->format(*m, opt);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, c["rendered"].get<std::string>());

  fs::path bin = fs::path(ARC_BIN_DIR) / "arclight-engine";
  if (fs::exists(bin)) {
    std::ofstream(tmp / "messages.json") << c["context"]["messages"].dump();
    int status = -1;
    std::string cli = run(bin.string() + " chat-template --model " + model.string() +
                              " --messages @" + (tmp / "messages.json").string() +
                              (opt.add_generation_prompt ? " --add-generation-prompt" : ""),
                          &status);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(cli, c["rendered"].get<std::string>());
  }

  arc::gguf::Writer bare;
  bare.set("general.architecture", arc::gguf::Value::str("qwen3"));
  ASSERT_TRUE(bare.write((tmp / "bare.gguf").string()).ok());
  auto bare_file = arc::gguf::File::open((tmp / "bare.gguf").string());
  ASSERT_TRUE(bare_file.ok());
  auto none = arc::ChatFormatter::from_gguf(*bare_file);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), arc::StatusCode::kNotFound);
  fs::remove_all(tmp);
}

}  // namespace
