// The GGUF path: vocabularies written as tokenizer.ggml.* metadata read back to the same ids.
#include <gtest/gtest.h>

#include "arc/gguf.h"
#include "arc/tokenizer.h"
#include "fixture_tokenizers.h"
#include "tiny_tokenizers.h"

namespace arc {
namespace {

Result<Tokenizer> round_trip(const Tokenizer& t, std::vector<uint8_t>& bytes) {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str("test"));
  ARC_RETURN_IF_ERROR(t.write_gguf_metadata(w));
  bytes = w.to_bytes();
  ARC_ASSIGN_OR_RETURN(auto file, gguf::File::parse(bytes));
  return Tokenizer::from_gguf(file);
}

class GgufFixtureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufFixtureTest, SameIdsAsReference) {
  if (!test::have_tokenizer_fixtures()) {
    GTEST_SKIP() << "shared fixtures not found at " << test::tokenizer_fixture_dir();
  }
  const std::string name = GetParam();
  const Tokenizer* json_tok = test::fixture_tokenizer(name);
  ASSERT_NE(json_tok, nullptr);
  std::vector<uint8_t> bytes;
  auto tok = round_trip(*json_tok, bytes);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ(tok->pre_tokenizer_name(), json_tok->pre_tokenizer_name());
  EXPECT_EQ(tok->vocab_size(), json_tok->vocab_size());
  EXPECT_EQ(tok->bos_id(), json_tok->bos_id());
  EXPECT_EQ(tok->eos_id(), json_tok->eos_id());
  int n = 0;
  for (const auto& c : test::fixture_cases(name)) {
    auto got = tok->encode(c["text"].get<std::string>());
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(*got, c["ids"].get<std::vector<TokenId>>()) << name << " case " << n;
    EXPECT_EQ(tok->decode(c["ids"].get<std::vector<TokenId>>()), c["decoded"].get<std::string>());
    ++n;
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, GgufFixtureTest, ::testing::ValuesIn(test::kFixtureNames),
                         [](const auto& info) { return std::string(info.param); });

// A SentencePiece GGUF without merges ranks pairs by token score, as llama.cpp does.
TEST(TokenizerGguf, SentencePieceFromScoresOnly) {
  if (!test::have_tokenizer_fixtures()) {
    GTEST_SKIP() << "shared fixtures not found at " << test::tokenizer_fixture_dir();
  }
  const Tokenizer* json_tok = test::fixture_tokenizer("llama2");
  ASSERT_NE(json_tok, nullptr);
  gguf::Writer full;
  ASSERT_TRUE(json_tok->write_gguf_metadata(full).ok());
  auto bytes = full.to_bytes();
  auto file = gguf::File::parse(bytes);
  ASSERT_TRUE(file.ok());
  gguf::Writer no_merges;
  for (const auto& [key, value] : file->metadata()) {
    if (key != "tokenizer.ggml.merges") no_merges.set(key, value);
  }
  auto bytes2 = no_merges.to_bytes();
  auto file2 = gguf::File::parse(bytes2);
  ASSERT_TRUE(file2.ok());
  auto tok = Tokenizer::from_gguf(*file2);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  for (const auto& c : test::fixture_cases("llama2")) {
    auto got = tok->encode(c["text"].get<std::string>());
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, c["ids"].get<std::vector<TokenId>>()) << c["text"];
  }
}

TEST(TokenizerGguf, TinyVocabulariesRoundTrip) {
  for (const std::string& doc : {test::tiny_byte_level_json(), test::tiny_sentencepiece_json()}) {
    auto t = Tokenizer::from_json(doc);
    ASSERT_TRUE(t.ok());
    std::vector<uint8_t> bytes;
    auto g = round_trip(*t, bytes);
    ASSERT_TRUE(g.ok()) << g.status().to_string();
    for (const char* text : {"hello world<|end|>", "ab a ba é <tool>", "", " \n "}) {
      auto a = t->encode(text), b = g->encode(text);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(*a, *b) << text;
    }
  }
}

Result<Tokenizer> from_metadata(const std::vector<std::pair<std::string, gguf::Value>>& kv,
                                std::vector<uint8_t>& bytes) {
  gguf::Writer w;
  for (const auto& [k, v] : kv) w.set(k, v);
  bytes = w.to_bytes();
  ARC_ASSIGN_OR_RETURN(auto file, gguf::File::parse(bytes));
  return Tokenizer::from_gguf(file);
}

gguf::Value strings(std::vector<std::string> s) {
  gguf::Array a{gguf::ValueType::kString, {}};
  for (auto& x : s) a.items.push_back(gguf::Value::str(x));
  return gguf::Value::array(std::move(a));
}

TEST(TokenizerGguf, MalformedMetadataErrors) {
  std::vector<uint8_t> bytes;
  auto expect = [&](const std::vector<std::pair<std::string, gguf::Value>>& kv, StatusCode code,
                    const std::string& words) {
    auto t = from_metadata(kv, bytes);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), code) << t.status().to_string();
    EXPECT_NE(t.status().message().find(words), std::string::npos) << t.status().to_string();
  };
  expect({{"general.architecture", gguf::Value::str("x")}}, StatusCode::kNotFound, "no tokenizer");
  expect({{"tokenizer.ggml.model", gguf::Value::str("bert")}}, StatusCode::kUnimplemented, "bert");
  expect({{"tokenizer.ggml.model", gguf::Value::str("gpt2")}}, StatusCode::kDataLoss,
         "tokenizer.ggml.tokens");
  expect({{"tokenizer.ggml.model", gguf::Value::str("gpt2")},
          {"tokenizer.ggml.tokens", gguf::Value::u32(3)}},
         StatusCode::kDataLoss, "array of strings");
  // Build a valid byte-level vocabulary, then break one thing at a time.
  std::vector<std::string> toks;
  for (int b = 0; b < 256; ++b) toks.push_back(test::gpt2_byte_char(b));
  std::vector<std::pair<std::string, gguf::Value>> ok = {
      {"tokenizer.ggml.model", gguf::Value::str("gpt2")},
      {"tokenizer.ggml.tokens", strings(toks)},
      {"tokenizer.ggml.merges", strings({})},
      {"tokenizer.ggml.pre", gguf::Value::str("qwen2")}};
  auto good = from_metadata(ok, bytes);
  ASSERT_TRUE(good.ok()) << good.status().to_string();
  // Pieces that are not valid UTF-8, and a byte token that is not <0xNN>, load without harm.
  auto odd = ok;
  auto odd_toks = toks;
  odd_toks.push_back("\xF0\x9F");
  odd_toks.push_back("<0xZZ>");
  odd[1].second = strings(odd_toks);
  gguf::Array odd_types{gguf::ValueType::kInt32, {}};
  for (size_t i = 0; i < odd_toks.size(); ++i) {
    odd_types.items.push_back(gguf::Value::i32(i + 1 == odd_toks.size() ? 6 : 1));
  }
  odd.push_back({"tokenizer.ggml.token_type", gguf::Value::array(std::move(odd_types))});
  auto odd_tok = from_metadata(odd, bytes);
  ASSERT_TRUE(odd_tok.ok()) << odd_tok.status().to_string();
  EXPECT_EQ(odd_tok->decode(std::vector<TokenId>{256, 'a'}),
            "\xEF\xBF\xBD"
            "a");
  auto bad = ok;
  bad[3].second = gguf::Value::str("mystery-pre");
  expect(bad, StatusCode::kUnimplemented, "mystery-pre");
  bad = ok;
  bad[2].second = strings({"a zz"});
  expect(bad, StatusCode::kDataLoss, "not in tokenizer.ggml.tokens");
  bad = ok;
  bad.push_back({"tokenizer.ggml.token_type",
                 gguf::Value::array({gguf::ValueType::kInt32, {gguf::Value::i32(1)}})});
  expect(bad, StatusCode::kDataLoss, "1 entries for 256 tokens");
}

}  // namespace
}  // namespace arc

namespace arc {
namespace {

// A GGUF file on disk: the reader opens it, and `arclight-engine tokenize --model` prints the
// reference ids.
TEST(TokenizerGguf, FileOnDiskAndTokenizeCommand) {
  if (!test::have_tokenizer_fixtures()) {
    GTEST_SKIP() << "shared fixtures not found at " << test::tokenizer_fixture_dir();
  }
  const Tokenizer* json_tok = test::fixture_tokenizer("qwen3");
  ASSERT_NE(json_tok, nullptr);
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str("qwen3"));
  ASSERT_TRUE(json_tok->write_gguf_metadata(w).ok());
  const std::string path = ::testing::TempDir() + "arc_tokenizer_qwen3.gguf";
  ASSERT_TRUE(w.write(path).ok());
  auto file = gguf::File::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto tok = Tokenizer::from_gguf(*file);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  auto ids = tok->encode("Hello, world!");
  ASSERT_TRUE(ids.ok());
  // The reference ids of fixture case 0 ("Hello, world!").
  const auto want = test::fixture_cases("qwen3")[0]["ids"].get<std::vector<TokenId>>();
  EXPECT_EQ(*ids, want);

  const std::string cli = std::string(ARC_BIN_DIR) + "/arclight-engine";
  if (std::filesystem::exists(cli)) {
    std::string cmd = cli + " tokenize --json --model " + path + " 'Hello, world!'";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << out;
    auto j = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << out;
    EXPECT_EQ(j["ids"].get<std::vector<TokenId>>(), want);
    EXPECT_EQ(j["pieces"][0], "Hello");
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace arc

namespace arc {
namespace {

// A fixture vocabulary written to GGUF under another pre-tokenizer name, optionally without
// tokenizer.ggml.add_bos_token (as some converters write files).
Result<Tokenizer> as_pre(const Tokenizer& t, const std::string& pre, bool drop_add_bos,
                         std::vector<uint8_t>& bytes) {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str("test"));
  ARC_RETURN_IF_ERROR(t.write_gguf_metadata(w));
  w.set("tokenizer.ggml.pre", gguf::Value::str(pre));
  if (drop_add_bos) w.erase("tokenizer.ggml.add_bos_token");
  bytes = w.to_bytes();
  ARC_ASSIGN_OR_RETURN(auto file, gguf::File::parse(bytes));
  return Tokenizer::from_gguf(file);
}

// GLM-4 ("glm4", "chatglm-bpe") splits with the Llama 3 regex and MiniMax-M2 with the o200k one
// (llama.cpp's llama-vocab.cpp); the real vocabularies of those two families are not among the
// fixtures, so each is checked on the vocabulary whose regex it shares, against that
// vocabulary's reference ids. Without add_bos_token, BOS follows llama.cpp's default per
// pre-tokenizer: Llama 3 adds it, GLM-4 and o200k-style vocabularies do not.
TEST(TokenizerGguf, PreTokenizersOfTheNewFamiliesAndTheirBosDefault) {
  if (!test::have_tokenizer_fixtures()) {
    GTEST_SKIP() << "shared fixtures not found at " << test::tokenizer_fixture_dir();
  }
  struct Case {
    const char* fixture;
    const char* pre;
    const char* expect_name;
    bool add_bos_default;
  };
  const Case cases[] = {{"llama3", "glm4", "glm4", false},
                        {"llama3", "chatglm-bpe", "glm4", false},
                        {"llama3", "llama-bpe", "llama-bpe", true},
                        {"llama3", "llama3", "llama-bpe", true},
                        {"gptoss", "minimax-m2", "minimax-m2", false},
                        {"qwen3", "qwen2", "qwen2", false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.fixture) + " as " + c.pre);
    const Tokenizer* json_tok = test::fixture_tokenizer(c.fixture);
    ASSERT_NE(json_tok, nullptr);
    std::vector<uint8_t> bytes;
    auto tok = as_pre(*json_tok, c.pre, /*drop_add_bos=*/true, bytes);
    ASSERT_TRUE(tok.ok()) << tok.status().to_string();
    EXPECT_EQ(tok->pre_tokenizer_name(), c.expect_name);
    EXPECT_EQ(tok->add_bos_by_default(), c.add_bos_default);
    int n = 0;
    for (const auto& k : test::fixture_cases(c.fixture)) {
      auto got = tok->encode(k["text"].get<std::string>());
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(*got, k["ids"].get<std::vector<TokenId>>()) << "case " << n++;
    }
    // The key, when present, wins over the default either way (BOS needs a BOS token: Qwen's
    // vocabulary has none).
    for (bool want : {true, false}) {
      gguf::Writer w;
      ASSERT_TRUE(json_tok->write_gguf_metadata(w).ok());
      w.set("tokenizer.ggml.pre", gguf::Value::str(c.pre));
      w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(want));
      bytes = w.to_bytes();
      auto file = gguf::File::parse(bytes);
      ASSERT_TRUE(file.ok());
      auto t2 = Tokenizer::from_gguf(*file);
      ASSERT_TRUE(t2.ok()) << t2.status().to_string();
      EXPECT_EQ(t2->add_bos_by_default(), want && t2->bos_id().has_value());
    }
  }
}

// UNUSED ids (vocabulary padding) decode to nothing, whole and streamed, and are never produced
// by encoding; control tokens stay out of streamed content unless asked for.
TEST(TokenizerGguf, UnusedTokensDecodeToNothing) {
  std::vector<std::string> toks;
  for (int b = 0; b < 256; ++b) toks.push_back(test::gpt2_byte_char(b));
  toks.push_back("[PAD256]");       // 256: unused
  toks.push_back("<|endoftext|>");  // 257: control
  gguf::Array types{gguf::ValueType::kInt32, {}};
  for (size_t i = 0; i < toks.size(); ++i) {
    types.items.push_back(gguf::Value::i32(i == 256 ? 5 : i == 257 ? 3 : 1));
  }
  std::vector<uint8_t> bytes;
  auto t = from_metadata({{"tokenizer.ggml.model", gguf::Value::str("gpt2")},
                          {"tokenizer.ggml.tokens", strings(toks)},
                          {"tokenizer.ggml.token_type", gguf::Value::array(std::move(types))},
                          {"tokenizer.ggml.merges", strings({})},
                          {"tokenizer.ggml.pre", gguf::Value::str("qwen2")}},
                         bytes);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->decode(std::vector<TokenId>{'a', 256, 'b'}), "ab");
  EXPECT_EQ(t->token_bytes(256), "");
  auto ids = t->encode("[PAD256]");
  ASSERT_TRUE(ids.ok());
  for (TokenId id : *ids) EXPECT_NE(id, 256);
  StreamingDetokenizer hidden(*t, /*skip_special=*/true);
  std::string text;
  for (TokenId id : {TokenId('x'), TokenId(256), TokenId(257), TokenId('y')})
    text += hidden.feed(id);
  EXPECT_EQ(text, "xy");
  StreamingDetokenizer shown(*t, /*skip_special=*/false);
  text.clear();
  for (TokenId id : {TokenId('x'), TokenId(256), TokenId(257), TokenId('y')})
    text += shown.feed(id);
  EXPECT_EQ(text, "x<|endoftext|>y");
}

}  // namespace
}  // namespace arc
