// Images through the HTTP layer: base64 and data URIs, parts moved into ChatRequest::images,
// and every refusal (no vision model, remote URL, bad base64, wrong or unsupported media type,
// undecodable bytes, decompression bomb) a 400 in the route's own error dialect.
#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "anthropic_api.h"
#include "api_images.h"
#include "arc/server.h"
#include "fake_service.h"
#include "openai_api.h"
#include "vision/vision_test_util.h"

namespace arc {
namespace {

using nlohmann::json;
using testing::FakeService;
using ::testing::HasSubstr;
using vision::test::base64;
using vision::test::read_image_file;

std::string bytes_str(const std::vector<uint8_t>& v) {
  return std::string(v.begin(), v.end());
}

TEST(Base64, KnownVectors) {
  auto d = [](std::string_view s) {
    auto r = server::decode_base64(s);
    EXPECT_TRUE(r.ok()) << s << ": " << r.status().to_string();
    return r.ok() ? bytes_str(*r) : std::string("<error>");
  };
  EXPECT_EQ(d(""), "");
  EXPECT_EQ(d("TWFu"), "Man");
  EXPECT_EQ(d("TWE="), "Ma");
  EXPECT_EQ(d("TQ=="), "M");
  EXPECT_EQ(d("TWE"), "Ma");        // padding left off
  EXPECT_EQ(d("TW\r\nFu"), "Man");  // line breaks
  EXPECT_EQ(d("-_-_"), d("+/+/"));  // URL-safe alphabet
  EXPECT_EQ(d("+/+/"), "\xfb\xff\xbf");
  auto bad = server::decode_base64("TW!u");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("position 2"));
  EXPECT_FALSE(server::decode_base64("TWFuT").ok());   // 5 characters: cut short
  EXPECT_FALSE(server::decode_base64("TQ==TQ").ok());  // data after padding
  EXPECT_FALSE(server::decode_base64("T===").ok());
}

TEST(DataUri, ParsesAndRefuses) {
  const auto png = read_image_file("rgb8.png");
  auto img = server::image_from_data_uri("data:image/png;base64," + base64(png), "x");
  ASSERT_TRUE(img.ok()) << img.status().to_string();
  EXPECT_EQ(img->bytes, png);
  EXPECT_EQ(img->media_type, "image/png");
  auto jpg = server::image_from_data_uri("data:IMAGE/JPG;name=a.jpg;base64,/9j/", "x");
  ASSERT_TRUE(jpg.ok()) << jpg.status().to_string();
  EXPECT_EQ(jpg->media_type, "image/jpeg");

  auto remote = server::image_from_data_uri("https://example.com/cat.png", "part");
  ASSERT_FALSE(remote.ok());
  EXPECT_THAT(remote.status().message(), HasSubstr("data URI"));
  EXPECT_THAT(remote.status().message(), HasSubstr("part"));
  auto plain = server::image_from_data_uri("data:image/png,rawbytes", "x");
  ASSERT_FALSE(plain.ok());
  EXPECT_THAT(plain.status().message(), HasSubstr("base64"));
  // OpenAI data URIs: any image/* type is taken, the bytes decide later; other types are not.
  EXPECT_TRUE(server::image_from_data_uri("data:image/gif;base64,R0lGODlh", "x").ok());
  auto text = server::image_from_data_uri("data:text/plain;base64,aGk=", "x");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("text/plain"));
  // Anthropic sources: only the types its API allows.
  auto gif = server::image_from_base64("image/gif", "R0lGODlh", "x");
  ASSERT_FALSE(gif.ok());
  EXPECT_THAT(gif.status().message(), HasSubstr("image/gif"));
  EXPECT_FALSE(server::image_from_data_uri("data:image/png;base64", "x").ok());   // no comma
  EXPECT_FALSE(server::image_from_data_uri("data:image/png;base64,", "x").ok());  // empty
}

json openai_image_body(const std::string& url) {
  return {
      {"model", "x"},
      {"messages", json::array({{{"role", "user"},
                                 {"content", json::array({{{"type", "text"}, {"text", "hi"}},
                                                          {{"type", "image_url"},
                                                           {"image_url", {{"url", url}}}}})}}})}};
}

json anthropic_image_body(const std::string& media_type, const std::string& data) {
  return {{"model", "x"},
          {"max_tokens", 8},
          {"messages",
           json::array(
               {{{"role", "user"},
                 {"content",
                  json::array({{{"type", "image"},
                                {"source",
                                 {{"type", "base64"}, {"media_type", media_type}, {"data", data}}}},
                               {{"type", "text"}, {"text", "what is it?"}}})}}})}};
}

TEST(ImageParts, OpenAiPartsMoveIntoImages) {
  const auto png = read_image_file("rgb8.png");
  auto r = server::parse_openai_chat(openai_image_body("data:image/png;base64," + base64(png)));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->images.size(), 1u);
  EXPECT_EQ(r->images[0].bytes, png);
  const json& part = r->messages[0]["content"][1];
  EXPECT_EQ(part["type"], "image_url");
  EXPECT_EQ(part["arc_image_index"], 0);
  EXPECT_EQ(r->messages.dump().find("base64"), std::string::npos);  // no data left in JSON
}

TEST(ImageParts, AnthropicBlocksMoveIntoImages) {
  const auto jpg = read_image_file("quad.jpg");
  auto r = server::parse_anthropic_messages(anthropic_image_body("image/jpeg", base64(jpg)), false);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->images.size(), 1u);
  EXPECT_EQ(r->images[0].bytes, jpg);
  EXPECT_EQ(r->images[0].media_type, "image/jpeg");
  const json& parts = r->messages[0]["content"];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]["type"], "image_url");
  EXPECT_EQ(parts[0]["arc_image_index"], 0);
  EXPECT_EQ(parts[1]["text"], "what is it?");
}

class ImageServerTest : public ::testing::Test {
 protected:
  void start() {
    ServerOptions o;
    o.port = 0;
    server_ = std::make_unique<Server>(o, service_);
    ASSERT_TRUE(server_->start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  // OpenAI: status and error message (or "" on success).
  std::pair<int, std::string> openai(const std::string& url) {
    auto r =
        client_->Post("/v1/chat/completions", openai_image_body(url).dump(), "application/json");
    if (!r) return {0, "no response"};
    auto j = json::parse(r->body);
    if (r->status != 200) {
      EXPECT_TRUE(j.contains("error")) << r->body;
      EXPECT_EQ(j["error"]["type"], "invalid_request_error") << r->body;
      return {r->status, j["error"].value("message", "")};
    }
    return {200, ""};
  }
  std::pair<int, std::string> anthropic(const std::string& mt, const std::string& data,
                                        const std::string& path = "/v1/messages") {
    auto r = client_->Post(path, anthropic_image_body(mt, data).dump(), "application/json");
    if (!r) return {0, "no response"};
    auto j = json::parse(r->body);
    if (r->status != 200) {
      EXPECT_EQ(j["type"], "error") << r->body;
      EXPECT_EQ(j["error"]["type"], "invalid_request_error") << r->body;
      return {r->status, j["error"].value("message", "")};
    }
    return {200, ""};
  }

  FakeService service_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ImageServerTest, ModelWithoutVisionRefuses) {
  start();
  const std::string png = base64(read_image_file("rgb8.png"));
  auto [st, msg] = openai("data:image/png;base64," + png);
  EXPECT_EQ(st, 400);
  EXPECT_THAT(msg, HasSubstr("no vision projector"));
  auto [st2, msg2] = anthropic("image/png", png);
  EXPECT_EQ(st2, 400);
  EXPECT_THAT(msg2, HasSubstr("no vision projector"));
  auto [st3, msg3] = anthropic("image/png", png, "/v1/messages/count_tokens");
  EXPECT_EQ(st3, 400);
  EXPECT_THAT(msg3, HasSubstr("no vision projector"));
}

TEST_F(ImageServerTest, VisionModelAcceptsAndReports) {
  service_.vision = true;
  start();
  auto models = client_->Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(json::parse(models->body)["data"][0]["meta"]["capabilities"]["vision"], true);
  const auto png = read_image_file("rgb8.png");
  auto [st, msg] = openai("data:image/png;base64," + base64(png));
  ASSERT_EQ(st, 200) << msg;
  {
    std::lock_guard<std::mutex> lock(service_.mu);
    ASSERT_EQ(service_.last_chat.images.size(), 1u);
    EXPECT_EQ(service_.last_chat.images[0].bytes, png);
  }
  const auto webp = read_image_file("quad_lossy.webp");
  auto [st2, msg2] = anthropic("image/webp", base64(webp));
  ASSERT_EQ(st2, 200) << msg2;
  std::lock_guard<std::mutex> lock(service_.mu);
  ASSERT_EQ(service_.last_chat.images.size(), 1u);
  EXPECT_EQ(service_.last_chat.images[0].media_type, "image/webp");
}

TEST_F(ImageServerTest, BadImagesAre400InEachDialect) {
  service_.vision = true;
  start();
  const std::string png = base64(read_image_file("rgb8.png"));
  struct Case {
    std::string media_type, data, needle;
  };
  const std::vector<Case> cases = {
      {"image/png", "iVBO!!!!", "not base64"},
      {"image/png", base64({'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0}), "unsupported image format"},
      {"image/png", base64(read_image_file("bomb.png")), "100000x100000"},
      {"image/webp", base64(read_image_file("bomb.webp")), "megapixels"},
      {"image/png", png.substr(0, 24), "truncated"},
  };
  for (const auto& c : cases) {
    auto [st, msg] = openai("data:" + c.media_type + ";base64," + c.data);
    EXPECT_EQ(st, 400) << c.needle;
    EXPECT_THAT(msg, HasSubstr(c.needle));
    auto [st2, msg2] = anthropic(c.media_type, c.data);
    EXPECT_EQ(st2, 400) << c.needle;
    EXPECT_THAT(msg2, HasSubstr(c.needle));
  }
  // A declared type that does not match the bytes: Anthropic refuses (as its API does); OpenAI
  // goes by the bytes (as its API does), checked in MediaTypeMismatch.
  auto [st3, msg3] = anthropic("image/jpeg", png);
  EXPECT_EQ(st3, 400);
  EXPECT_THAT(msg3, HasSubstr("declared image/jpeg but its data is image/png"));
  auto [st4, msg4] = anthropic("image/gif", png);
  EXPECT_EQ(st4, 400);
  EXPECT_THAT(msg4, HasSubstr("image/gif"));
  auto [st, msg] = openai("http://example.com/a.png");
  EXPECT_EQ(st, 400);
  EXPECT_THAT(msg, HasSubstr("data URI"));
  EXPECT_EQ(service_.runs.load(), 0);  // nothing reached the engine
}

TEST_F(ImageServerTest, MediaTypeMismatchOpenAiGoesByTheBytes) {
  service_.vision = true;
  start();
  const auto png = read_image_file("rgb8.png");
  for (const char* declared : {"image/jpeg", "image/gif", "image/x-whatever"}) {
    auto [st, msg] = openai(std::string("data:") + declared + ";base64," + base64(png));
    ASSERT_EQ(st, 200) << declared << ": " << msg;
    std::lock_guard<std::mutex> lock(service_.mu);
    ASSERT_EQ(service_.last_chat.images.size(), 1u);
    EXPECT_EQ(service_.last_chat.images[0].media_type, "image/png");
  }
  auto [st, msg] = openai("data:text/plain;base64," + base64(png));
  EXPECT_EQ(st, 400);
  EXPECT_THAT(msg, HasSubstr("text/plain"));
}

TEST_F(ImageServerTest, TooManyImages) {
  service_.vision = true;
  start();
  json body = openai_image_body("data:image/png;base64," + base64(read_image_file("rgb8.png")));
  json& parts = body["messages"][0]["content"];
  while (parts.size() <= server::kMaxImagesPerRequest + 1) parts.push_back(parts[1]);
  auto r = client_->Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_THAT(r->body, HasSubstr("at most"));
}

}  // namespace
}  // namespace arc

namespace arc {
namespace {

TEST(ImageBodyLimit, Clear413InEachDialect) {
  FakeService service;
  service.vision = true;
  ServerOptions o;
  o.port = 0;
  o.max_body_bytes = 64 * 1024;
  Server server(o, service);
  ASSERT_TRUE(server.start().ok());
  httplib::Client client("127.0.0.1", server.port());
  const std::string big(100 * 1024, 'A');
  auto r =
      client.Post("/v1/chat/completions", openai_image_body("data:image/png;base64," + big).dump(),
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  auto j = json::parse(r->body);
  EXPECT_THAT(j["error"]["message"].get<std::string>(), HasSubstr("smaller or fewer images"));
  r = client.Post("/v1/messages", anthropic_image_body("image/png", big).dump(),
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  j = json::parse(r->body);
  EXPECT_EQ(j["type"], "error");
  EXPECT_THAT(j["error"]["message"].get<std::string>(), HasSubstr("smaller or fewer images"));
  server.stop();
}

}  // namespace
}  // namespace arc
