// Small hand-made tokenizer.json documents for tests that must not depend on the shared fixtures.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace arc::test {

// GPT-2's byte -> character table, written out independently of the library's.
inline std::string gpt2_byte_char(int b) {
  int cp = b;
  if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255))) {
    int n = 0;
    for (int k = 0; k < b; ++k) {
      if (!((k >= 33 && k <= 126) || (k >= 161 && k <= 172) || (k >= 174 && k <= 255))) ++n;
    }
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) {
    s.push_back(char(cp));
  } else {
    s.push_back(char(0xC0 | (cp >> 6)));
    s.push_back(char(0x80 | (cp & 0x3F)));
  }
  return s;
}

// Byte-level BPE: ids 0..255 are the bytes, then merges "h e" -> 256, "l l" -> 257,
// "he ll" -> 258, "Ġ w" -> 259; added tokens <|end|> (special, 260) and <tool> (261).
inline std::string tiny_byte_level_json() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[gpt2_byte_char(b)] = b;
  vocab["he"] = 256;
  vocab["ll"] = 257;
  vocab["hell"] = 258;
  vocab[gpt2_byte_char(' ') + "w"] = 259;
  nlohmann::json j = {
      {"version", "1.0"},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"added_tokens",
       {{{"id", 260}, {"content", "<|end|>"}, {"special", true}},
        {{"id", 261}, {"content", "<tool>"}, {"special", false}}}},
      {"model",
       {{"type", "BPE"},
        {"vocab", vocab},
        {"merges", {"h e", "l l", "he ll", gpt2_byte_char(' ') + " w"}}}}};
  return j.dump();
}

// SentencePiece-style BPE with byte fallback: <unk> <s> </s>, <0x00>..<0xFF> (3..258), then
// ▁ (259), a (260), b (261), ▁a (262), ab (263), ▁ab (264).
inline std::string tiny_sentencepiece_json() {
  nlohmann::json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  const char* hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    vocab[std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">"] = 3 + b;
  }
  const std::string sp = "\xE2\x96\x81";
  vocab[sp] = 259;
  vocab["a"] = 260;
  vocab["b"] = 261;
  vocab[sp + "a"] = 262;
  vocab["ab"] = 263;
  vocab[sp + "ab"] = 264;
  nlohmann::json j = {
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", sp}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", sp}}}}}},
      {"pre_tokenizer", nullptr},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", sp}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"added_tokens",
       {{{"id", 0}, {"content", "<unk>"}, {"special", true}},
        {{"id", 1}, {"content", "<s>"}, {"special", true}},
        {{"id", 2}, {"content", "</s>"}, {"special", true}}}},
      {"model",
       {{"type", "BPE"},
        {"byte_fallback", true},
        {"unk_token", "<unk>"},
        {"vocab", vocab},
        {"merges", {sp + " a", "a b", sp + "a b"}}}}};
  return j.dump();
}

}  // namespace arc::test
