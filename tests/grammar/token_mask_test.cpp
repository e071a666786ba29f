// Token masks against brute force: at every step of random constrained walks, a token is
// allowed exactly when its bytes, fed one at a time to a fresh copy of the document so far,
// continue a valid document (or, for an end-of-generation id, when the document is complete).
// Small hand-made vocabularies with tokens that span several grammar symbols and UTF-8
// characters split across tokens, then the real 151k-token qwen3 vocabulary.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "grammar/token_mask.h"
#include "grammar/tokenizer_vocab.h"
#include "tokenizer/fixture_tokenizers.h"

namespace arc::grammar {
namespace {

using nlohmann::ordered_json;

bool allowed(const TokenMask& m, int32_t id) {
  return (m[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1u;
}

// The oracle: replays the whole document so far plus the token on a new matcher.
bool brute_force(const std::shared_ptr<const Grammar>& g, const std::string& doc,
                 std::string_view tok) {
  Matcher m(g);
  if (!m.advance(doc)) return false;
  for (char c : tok) {
    if (!m.advance(std::string_view(&c, 1))) return false;
  }
  return true;
}

std::shared_ptr<const TokenVocab> small_vocab() {
  std::vector<std::string> t;
  for (char c : std::string("{}[],:\" \n\t0123456789.eE+-\\/")) t.emplace_back(1, c);
  for (char c = 'a'; c <= 'z'; ++c) t.emplace_back(1, c);
  for (const char* s :
       {"{\"",    "\":",      "\",",  "\"}",          "\"a",      "true", "null",    "false",
        "tr",     "ue",       ", \"", "\n  ",         "\n    ",   "\xc3", "\xa9",    "\xc3\xa9",
        "\xa9\"", "\xe2\x82", "\xac", "\xe2\x82\xac", "1.",       "e+",   "]]",      "}]",
        "[{",     "\\u",      "00",   "e9",           "\"]",      "\"},", "},{\"",   "\":\"",
        "12",     "-0",       "\": ", "\", \"",       "abc",      "red",  "\"red\"", "\"b\":",
        "\":[",   "[]",       "{}",   "\xf0\x9f",     "\x98\x80", "\xff", "\x01",    "d\"",
        "0e",     "0,"}) {
    t.emplace_back(s);
  }
  const size_t n_text = t.size();
  t.emplace_back("<|im_end|>");  // special: never text
  t.emplace_back("</s>");        // the stop token
  t.emplace_back("");            // an empty token
  std::vector<bool> usable(t.size(), true);
  usable[n_text] = false;
  usable[n_text + 1] = false;
  return std::make_shared<const TokenVocab>(std::move(t), usable,
                                            std::vector<int32_t>{static_cast<int32_t>(n_text + 1)});
}

// Random walks under `g`; every step's mask checked against the oracle for every token.
void check_walks(const std::shared_ptr<const Grammar>& g,
                 const std::shared_ptr<const TokenVocab>& vocab, int walks, int max_steps,
                 uint32_t seed, bool check_every_token = true) {
  TokenMasker masker(g, vocab);
  std::mt19937 rng(seed);
  TokenMask mask;
  int completed = 0;
  std::vector<bool> usable(static_cast<size_t>(vocab->n_vocab()), false);
  for (int32_t id : vocab->sorted()) usable[static_cast<size_t>(id)] = true;
  for (int w = 0; w < walks; ++w) {
    Matcher m(g);
    Matcher oracle(g);  // advanced alongside, never asked for masks
    std::string doc;
    for (int step = 0; step < max_steps; ++step) {
      masker.fill(m, mask);
      std::vector<int32_t> ok;
      for (int32_t id = 0; id < vocab->n_vocab(); ++id) {
        const bool is_stop =
            std::find(vocab->stops().begin(), vocab->stops().end(), id) != vocab->stops().end();
        if (allowed(mask, id)) ok.push_back(id);
        if (!check_every_token && !allowed(mask, id) && id % 97 != 0) continue;
        bool expect = false;
        if (is_stop) {
          expect = m.complete();
        } else if (usable[static_cast<size_t>(id)]) {
          expect = check_every_token ? brute_force(g, doc, vocab->bytes(id))
                                     : oracle.accepts(vocab->bytes(id));
        }
        ASSERT_EQ(allowed(mask, id), expect)
            << "token " << id << " '" << vocab->bytes(id) << "' after '" << doc << "'";
      }
      ASSERT_FALSE(ok.empty()) << "nothing allowed after '" << doc << "'";
      const int32_t pick = ok[rng() % ok.size()];
      if (std::find(vocab->stops().begin(), vocab->stops().end(), pick) != vocab->stops().end()) {
        ++completed;
        break;
      }
      ASSERT_TRUE(m.advance(vocab->bytes(pick)));
      ASSERT_TRUE(oracle.advance(vocab->bytes(pick)));
      doc += vocab->bytes(pick);
    }
  }
  (void)completed;
}

std::shared_ptr<const Grammar> compile(const char* schema) {
  auto g = json_schema_grammar(ordered_json::parse(schema));
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::make_shared<const Grammar>(std::move(g).value());
}

const char* const kSchemas[] = {
    R"({"type":"object","properties":{"a":{"type":"string","maxLength":4},
        "b":{"type":"array","items":{"type":"integer"},"maxItems":3},
        "c":{"enum":["red","green",null]}},"required":["a","b"]})",
    R"({"$defs":{"n":{"type":"object","properties":{"v":{"type":"number"},
        "next":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}},"required":["v","next"]}},
        "$ref":"#/$defs/n"})",
    R"({"type":"array","items":{"type":["string","boolean"]},"minItems":1})",
};

TEST(TokenMask, SmallVocabularyAgainstBruteForce) {
  auto vocab = small_vocab();
  for (const char* s : kSchemas) check_walks(compile(s), vocab, 20, 50, 11);
  check_walks(std::make_shared<const Grammar>(json_any_grammar(false)), vocab, 20, 50, 12);
  check_walks(std::make_shared<const Grammar>(json_any_grammar(true)), vocab, 20, 50, 13);
}

TEST(TokenMask, FreeTextWithConstrainedCallsAgainstBruteForce) {
  GrammarBuilder b;
  JsonSchemaCompiler c(b);
  auto args = c.value(ordered_json::parse(kSchemas[0]), "tools");
  ASSERT_TRUE(args.ok());
  const Sym call = b.rule("call", {cat({b.literal("\n"), one(*args), b.literal("</call>")})});
  const Sym root = b.rule("root", {{b.until("text", "<call>", {call}, /*free_text=*/true)}});
  check_walks(std::make_shared<const Grammar>(std::move(b).build(root.arg)), small_vocab(), 20, 40,
              14);
}

TEST(TokenMask, EndTokenOnlyWhenComplete) {
  auto vocab = small_vocab();
  auto g = compile(R"({"const":"red"})");
  TokenMasker masker(g, vocab);
  Matcher m(g);
  TokenMask mask;
  masker.fill(m, mask);
  const int32_t stop = vocab->stops()[0];
  EXPECT_FALSE(allowed(mask, stop));
  ASSERT_TRUE(m.advance("\"red\""));
  masker.fill(m, mask);
  EXPECT_TRUE(allowed(mask, stop));
  int n_allowed = 0;
  for (int32_t id = 0; id < vocab->n_vocab(); ++id) n_allowed += allowed(mask, id);
  EXPECT_EQ(n_allowed, 1);  // the document is finished: only the end
}

TEST(TokenMask, Qwen3VocabularyAgainstBruteForce) {
  if (!test::have_tokenizer_fixtures()) {
    GTEST_SKIP() << "shared fixtures not found at " << test::tokenizer_fixture_dir();
  }
  const Tokenizer* tok = test::fixture_tokenizer("qwen3");
  ASSERT_NE(tok, nullptr);
  std::vector<int32_t> stops;
  if (auto id = tok->find_token("<|im_end|>")) stops.push_back(*id);
  auto vocab = vocab_from_tokenizer(*tok, stops);
  // Each step checks the allowed tokens against the oracle, and every 97th of the others.
  check_walks(compile(kSchemas[0]), vocab, 2, 12, 21, /*check_every_token=*/false);
  check_walks(std::make_shared<const Grammar>(json_any_grammar(true)), vocab, 2, 12, 22, false);
}

}  // namespace
}  // namespace arc::grammar
