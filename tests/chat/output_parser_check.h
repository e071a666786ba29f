// Helpers of the output-parser tests: expected events, and the check that every chunking of a
// text (each single split point, and byte by byte) gives the same events once adjacent deltas are
// joined, with no delta ending inside a UTF-8 character.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arc/output_parser.h"

namespace arc_test {

using arc::OutputEvent;
using arc::OutputParser;
using arc::OutputParserOptions;
using arc::OutputSyntax;
using Kind = OutputEvent::Kind;

inline OutputEvent content(std::string t) {
  return {Kind::kContent, std::move(t), "", "", ""};
}
inline OutputEvent reasoning(std::string t) {
  return {Kind::kReasoning, std::move(t), "", "", ""};
}
inline OutputEvent call(std::string name, std::string args) {
  return {Kind::kToolCall, "", std::move(name), std::move(args), ""};
}
inline OutputEvent error(std::string raw) {
  return {Kind::kToolCallError, std::move(raw), "", "", ""};
}

inline OutputParserOptions opts(OutputSyntax s) {
  OutputParserOptions o;
  o.syntax = s;
  return o;
}

inline bool complete_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (i + n > s.size()) return false;
    i += n;
  }
  return true;
}

inline std::vector<OutputEvent> parse_chunks(const OutputParserOptions& opt,
                                             const std::vector<std::string>& chunks) {
  OutputParser p(opt);
  std::vector<OutputEvent> all;
  for (const auto& c : chunks) {
    for (auto& e : p.feed(c)) all.push_back(std::move(e));
  }
  for (auto& e : p.finish()) all.push_back(std::move(e));
  for (const auto& e : all) {
    EXPECT_TRUE(complete_utf8(e.text)) << "delta ends inside a character: " << e.text;
  }
  return arc::merge_deltas(all);
}

// Compares kind, text (for deltas and errors), name and arguments; the raw text of a successful
// call is checked separately where it matters.
inline void expect_events(const std::vector<OutputEvent>& got, const std::vector<OutputEvent>& want,
                          const std::string& how) {
  std::string dump;
  for (const auto& e : got) {
    dump += "[" + std::to_string(static_cast<int>(e.kind)) + " '" + e.text + "' " + e.name + " " +
            e.arguments + "] ";
  }
  ASSERT_EQ(got.size(), want.size()) << how << ": " << dump;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(static_cast<int>(got[i].kind), static_cast<int>(want[i].kind)) << how << " #" << i;
    if (want[i].kind != Kind::kToolCall) {
      EXPECT_EQ(got[i].text, want[i].text) << how << " #" << i;
    }
    EXPECT_EQ(got[i].name, want[i].name) << how << " #" << i;
    EXPECT_EQ(got[i].arguments, want[i].arguments) << how << " #" << i;
    if (want[i].kind == Kind::kToolCallError) {
      EXPECT_FALSE(got[i].error.empty());
    }
  }
}

inline void check_every_chunking(const OutputParserOptions& opt, const std::string& text,
                                 const std::vector<OutputEvent>& want) {
  expect_events(parse_chunks(opt, {text}), want, "one chunk");
  for (size_t split = 1; split < text.size(); ++split) {
    expect_events(parse_chunks(opt, {text.substr(0, split), text.substr(split)}), want,
                  "split at " + std::to_string(split));
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  expect_events(parse_chunks(opt, bytes), want, "byte by byte");
}

}  // namespace arc_test
