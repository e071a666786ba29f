// Malformed tokenizer.json documents give errors that say what is wrong.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arc/tokenizer.h"
#include "tiny_tokenizers.h"

namespace arc {
namespace {

void expect_error(const std::string& doc, StatusCode code, const std::string& words) {
  auto t = Tokenizer::from_json(doc);
  ASSERT_FALSE(t.ok()) << doc.substr(0, 200);
  EXPECT_EQ(t.status().code(), code) << t.status().to_string();
  EXPECT_NE(t.status().message().find(words), std::string::npos) << t.status().to_string();
}

nlohmann::json tiny() {
  return nlohmann::json::parse(test::tiny_byte_level_json());
}

TEST(TokenizerErrors, NotJson) {
  expect_error("{\"model\": ", StatusCode::kDataLoss, "not valid JSON");
  expect_error("[1, 2]", StatusCode::kDataLoss, "not a JSON object");
}

TEST(TokenizerErrors, MissingOrWrongModel) {
  auto j = tiny();
  j.erase("model");
  expect_error(j.dump(), StatusCode::kDataLoss, "no 'model'");
  j = tiny();
  j["model"]["type"] = "WordPiece";
  expect_error(j.dump(), StatusCode::kUnimplemented, "WordPiece");
  j = tiny();
  j["model"]["vocab"] = nlohmann::json::array();
  expect_error(j.dump(), StatusCode::kDataLoss, "'vocab'");
}

TEST(TokenizerErrors, BadVocabAndMerges) {
  auto j = tiny();
  j["model"]["vocab"]["x"] = "seven";
  expect_error(j.dump(), StatusCode::kDataLoss, "non-integer id");
  j = tiny();
  j["model"]["vocab"]["x"] = -3;
  expect_error(j.dump(), StatusCode::kDataLoss, "outside");
  j = tiny();
  j["model"]["merges"].push_back("q zz");
  expect_error(j.dump(), StatusCode::kDataLoss, "not in the vocabulary");
  j = tiny();
  j["model"]["merges"].push_back("nospace");
  expect_error(j.dump(), StatusCode::kDataLoss, "separated by a space");
  j = tiny();
  j["model"]["merges"].push_back(42);
  expect_error(j.dump(), StatusCode::kDataLoss, "merge #4");
  j = tiny();
  j["model"]["vocab"].erase(test::gpt2_byte_char(0));
  expect_error(j.dump(), StatusCode::kDataLoss, "byte 0x00");
}

TEST(TokenizerErrors, BadAddedTokensAndSteps) {
  auto j = tiny();
  j["added_tokens"].push_back({{"content", "<x>"}});
  expect_error(j.dump(), StatusCode::kDataLoss, "added_tokens");
  j = tiny();
  j["normalizer"] = {{"type", "NFKD"}};
  expect_error(j.dump(), StatusCode::kUnimplemented, "NFKD");
  j = tiny();
  j["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  expect_error(j.dump(), StatusCode::kInvalidArgument, "does not compile");
  j = tiny();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Removed"}};
  expect_error(j.dump(), StatusCode::kUnimplemented, "Removed");
  j = tiny();
  j["added_tokens"][0]["lstrip"] = "yes";  // wrong JSON type deep inside
  expect_error(j.dump(), StatusCode::kDataLoss, "wrong type");
}

TEST(TokenizerErrors, MissingFile) {
  auto t = Tokenizer::from_json_file("/nonexistent/tokenizer.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace arc
