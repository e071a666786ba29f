// Issue 33: hostile and sloppy request bodies are 400s in the request's dialect, never a crash
// or a 500; the API key check and its scheme.
#include <httplib.h>

#include <gtest/gtest.h>

#include "anthropic_api.h"
#include "api_common.h"
#include "arc/server.h"
#include "auth.h"
#include "fake_service.h"
#include "openai_api.h"

namespace arc {
namespace {

using nlohmann::json;
using testing::FakeService;

std::string nested(const std::string& open, const std::string& close, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += open;
  s += "1";
  for (int i = 0; i < n; ++i) s += close;
  return s;
}

const std::string kDeep = nested("[", "]", 100000);

TEST(ParseBody, DeepNestingIsRefusedWithTheLimit) {
  for (const std::string& body :
       {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\",\"x\":" + kDeep + "}]}",
        "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"a\":" +
            nested("{\"a\":", "}", 100000) + "}}}]}"}) {
    auto r = server::parse_body(body);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(server::http_status_for(r.status()), 400);
    EXPECT_NE(r.status().message().find("deeper than 64"), std::string::npos)
        << r.status().message();
  }
  // Brackets inside strings do not count; 64 levels are fine.
  EXPECT_TRUE(server::parse_body("{\"a\":\"" + std::string(10000, '[') + "\"}").ok());
  EXPECT_TRUE(server::parse_body("{\"a\":" + nested("[", "]", 63) + "}").ok());
}

TEST(ParseBody, InvalidUtf8AndHugeNumbersAre400) {
  for (const std::string& body : {std::string("{\"a\":\"\xff\xfe\"}"), std::string("{\xc3\x28}"),
                                  std::string("{\"a\":\"\xed\xa0\x80\"}"),  // a surrogate
                                  std::string("{\"a\":\"\xe2\x82\"}")}) {
    auto r = server::parse_body(body);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("UTF-8"), std::string::npos) << r.status().message();
  }
  for (const std::string& body : {"{\"temperature\":1e400}", "{\"a\":[-1e400]}"}) {
    auto r = server::parse_body(body);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("1e400"), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(server::parse_body("{\"a\":\"h\xc3\xa9 \xf0\x9f\x98\x80\"}").ok());
}

// The message of each refusal names the field.
void expect_refused(const Status& s, const std::string& field) {
  ASSERT_FALSE(s.ok()) << field;
  EXPECT_EQ(server::http_status_for(s), 400);
  EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
}

json user(const json& content) {
  return {{"role", "user"}, {"content", content}};
}

TEST(RequestFields, WrongTypedOptionalFieldsNameTheField) {
  json b = {{"messages", json::array({user("x")})}, {"stream_options", {{"include_usage", "yes"}}}};
  expect_refused(server::parse_openai_chat(b).status(), "stream_options.include_usage");
  b = {{"messages", json::array({user("x")})},
       {"tools", json::array({{{"type", 5}, {"function", {{"name", "f"}}}}})}};
  expect_refused(server::parse_openai_chat(b).status(), "tools[0]");
  b = {{"messages", json::array({user("x")})}, {"response_format", {{"type", 5}}}};
  expect_refused(server::parse_openai_chat(b).status(), "response_format.type");
  b = {{"messages", json::array({{{"role", "assistant"}, {"content", "x"}, {"tool_call_id", 5}}})}};
  expect_refused(server::parse_openai_chat(b).status(), "tool_call_id");
  b = {
      {"messages",
       json::array({{{"role", "assistant"},
                     {"content", nullptr},
                     {"tool_calls", json::array({{{"id", 7}, {"function", {{"name", "f"}}}}})}}})}};
  expect_refused(server::parse_openai_chat(b).status(), "tool_calls[0].id");

  json a = {{"model", "c"}, {"max_tokens", 4}};
  a["messages"] = json::array({user(json::array(
      {{{"type", "tool_result"}, {"tool_use_id", "t"}, {"content", "x"}, {"is_error", "yes"}}}))});
  expect_refused(server::parse_anthropic_messages(a, false).status(), "is_error");
  a["messages"] = json::array({user("x")});
  a["thinking"] = {{"type", 5}};
  expect_refused(server::parse_anthropic_messages(a, false).status(), "thinking.type");
  a["thinking"] = {{"type", "enabled"}};
  a["tools"] = json::array({{{"name", "f"}, {"description", 5}}});
  expect_refused(server::parse_anthropic_messages(a, false).status(), "tools[0].description");
  a.erase("tools");
  a["tool_choice"] = {{"type", 3}};
  expect_refused(server::parse_anthropic_messages(a, false).status(), "tool_choice.type");
  a.erase("tool_choice");
  a["messages"] = json::array(
      {{{"role", "assistant"},
        {"content",
         json::array({{{"type", "tool_use"}, {"id", "t"}, {"name", "f"}, {"input", 5}}})}}});
  expect_refused(server::parse_anthropic_messages(a, false).status(), "input");
  a["messages"] = json::array({{{"role", "assistant"}, {"content", json::array({{{"type", 9}}})}}});
  expect_refused(server::parse_anthropic_messages(a, false).status(), "type");
}

TEST(ErrorAnswers, MessagesWithInvalidUtf8StillMakeJson) {
  httplib::Response res;
  server::send_openai_error(res, invalid_argument("bad \xff name"));
  EXPECT_EQ(res.status, 400);
  EXPECT_NO_THROW((void)json::parse(res.body));
  server::send_anthropic_error(res, invalid_argument("bad \xc3 name"));
  EXPECT_EQ(json::parse(res.body)["type"], "error");
}

TEST(Auth, BearerSchemeIsCaseInsensitive) {
  EXPECT_EQ(server::bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(server::bearer_token("bearer abc"), "abc");
  EXPECT_EQ(server::bearer_token("BEARER \t abc "), "abc");
  EXPECT_FALSE(server::bearer_token("Basic abc"));
  EXPECT_FALSE(server::bearer_token("Bearerabc"));
  EXPECT_FALSE(server::bearer_token("Bearer "));
  EXPECT_TRUE(server::request_has_api_key("bEaReR k3y", "", "k3y"));
  EXPECT_TRUE(server::request_has_api_key("", "k3y", "k3y"));
  EXPECT_FALSE(server::request_has_api_key("Bearer k3", "k3yy", "k3y"));
  EXPECT_FALSE(server::api_key_matches("", ""));
  EXPECT_TRUE(server::api_key_matches(std::string(1000, 'k'), std::string(1000, 'k')));
  EXPECT_FALSE(server::api_key_matches(std::string(999, 'k'), std::string(1000, 'k')));
}

class HardeningServerTest : public ::testing::Test {
 protected:
  void start(ServerOptions o = {}) {
    o.port = 0;
    server_ = std::make_unique<Server>(o, service_);
    ASSERT_TRUE(server_->start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  httplib::Result post(const std::string& path, const std::string& body, httplib::Headers h = {}) {
    return client_->Post(path.c_str(), h, body, "application/json");
  }
  FakeService service_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HardeningServerTest, HostileBodiesAre400InTheRoutesDialect) {
  start();
  const std::vector<std::string> bodies = {
      "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"x\","
      "\"a\":" +
          kDeep + "}]}",
      std::string("{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\","
                  "\"content\":\"\xff\"}]}"),
      "{\"model\":\"m\",\"max_tokens\":4,\"temperature\":1e400,\"messages\":[]}",
      "{\"model\":\"m\",\"max_tokens\":4,\"stream\":true,\"stream_options\":{\"include_usage\":"
      "\"yes\"},\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
      "{\"model\":\"m\",\"max_tokens\":4,\"thinking\":{\"type\":5},\"tools\":[{\"type\":5}],"
      "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"};
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::string& body = bodies[i];
    auto r = post("/v1/chat/completions", body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_TRUE(json::parse(r->body).contains("error")) << r->body;
    if (i != 3) {  // stream_options is OpenAI's only
      r = post("/v1/messages", body);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 400) << r->body;
      EXPECT_EQ(json::parse(r->body)["type"], "error") << r->body;
    }
    // The body parse itself refuses the first three on every route.
    for (const char* route : {"/engine/load", "/engine/fit", "/v1/completions"}) {
      if (i >= 3 && std::string(route) != "/v1/completions") continue;
      r = post(route, body);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 400) << route << ": " << r->body;
    }
  }
  // The server is still there.
  EXPECT_EQ(client_->Get("/health")->status, 200);
}

TEST_F(HardeningServerTest, BearerSchemeInAnyCase) {
  ServerOptions o;
  o.api_key = "s3cret";
  start(o);
  for (const char* scheme : {"Bearer", "bearer", "BEARER"}) {
    auto r = client_->Get("/v1/models", {{"Authorization", std::string(scheme) + " s3cret"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << scheme;
  }
  auto r = client_->Get("/v1/models", {{"Authorization", "Bearer s3cre"}});
  EXPECT_EQ(r->status, 401);
}

TEST_F(HardeningServerTest, SecondServerOnABusyPortFails) {
  start();
  ServerOptions o;
  o.port = server_->port();
  FakeService other;
  Server second(o, other);
  Status s = second.start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("port in use"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace arc
