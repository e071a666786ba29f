// `fit --url`: the fit calculator reads a remote GGUF file's header through HTTP range requests
// (tests/fit/test_hub.h serves generated models) and must give what the local file gives, for
// single and split files and for headers longer than the first range. The oracle is the local
// reader (arc::fit::model_spec_from_gguf_file over File::open) on the same bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "arc/fit.h"
#include "arc/fit_gguf.h"
#include "arc/fit_json.h"
#include "arc/fit_remote.h"
#include "arc/gguf.h"
#include "model/test_model.h"
#include "test_hub.h"

namespace arc::fit {
namespace {

namespace fs = std::filesystem;
using testing::HubFile;
using testing::HubRepo;
using testing::TestHub;

fs::path temp_dir(const std::string& tag) {
  fs::path d =
      fs::temp_directory_path() /
      fmt::format("arc_fit_remote_{}_{}", tag, ::getpid());  // runs side by side do not collide
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string write_model(const fs::path& dir, const std::string& name, int64_t n_vocab = 0) {
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  o.n_embd = 128;
  o.n_layer = 3;
  o.n_vocab = n_vocab;
  o.type = "Q8_0";
  const std::string path = (dir / name).string();
  EXPECT_TRUE(write_test_model(o, path).ok());
  return path;
}

// Splits a GGUF into `n` parts as llama.cpp's gguf-split does: metadata in the first part, the
// split.* keys in every part, the tensors in order.
std::vector<std::string> split_model(const std::string& src, const fs::path& dir,
                                     const std::string& prefix, int n) {
  auto f = gguf::File::open(src);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  std::vector<std::string> paths;
  const auto& tensors = f->tensors();
  const size_t per = (tensors.size() + n - 1) / n;
  for (int part = 0; part < n; ++part) {
    gguf::Writer w;
    w.set_alignment(f->alignment());
    if (part == 0) {
      for (const auto& [k, v] : f->metadata()) {
        if (k != "general.alignment") w.set(k, v);
      }
    }
    w.set("split.no", gguf::Value::u16(static_cast<uint16_t>(part)));
    w.set("split.count", gguf::Value::u16(static_cast<uint16_t>(n)));
    w.set("split.tensors.count", gguf::Value::i32(static_cast<int32_t>(tensors.size())));
    for (size_t i = part * per; i < std::min(tensors.size(), (part + 1) * per); ++i) {
      const auto& t = tensors[i];
      EXPECT_TRUE(w.add_tensor(t.name, t.type, t.shape, f->tensor_data(t)).ok());
    }
    paths.push_back((dir / fmt::format("{}-{:05d}-of-{:05d}.gguf", prefix, part + 1, n)).string());
    EXPECT_TRUE(w.write(paths.back()).ok());
  }
  return paths;
}

nlohmann::json report_json(const ModelSpec& spec, int boxes) {
  Cluster c;
  c.boxes = boxes;
  Workload w;
  w.context = 4096;
  auto r = compute(spec, c, w);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return to_json(*r);
}

TEST(FitRemote, SameSpecAsTheLocalFileReadingOnlyTheHeader) {
  const fs::path dir = temp_dir("single");
  const std::string path = write_model(dir, "tiny-Q8_0.gguf");
  TestHub hub({HubRepo{"test/tiny-GGUF", {HubFile{"tiny-Q8_0.gguf", path}}}});
  ASSERT_TRUE(hub.running());

  RemoteOptions o;
  o.first_range_bytes = 1024;  // far shorter than the header: the range must grow
  auto remote = model_spec_from_gguf_url(hub.resolve_url("test/tiny-GGUF", "tiny-Q8_0.gguf"), o);
  ASSERT_TRUE(remote.ok()) << remote.status().to_string();
  auto local = model_spec_from_gguf_file(path);
  ASSERT_TRUE(local.ok());

  EXPECT_EQ(remote->spec.weights_bytes, local->weights_bytes);
  EXPECT_EQ(remote->spec.active_bytes_per_token, local->active_bytes_per_token);
  EXPECT_EQ(remote->spec.arch.layers, local->arch.layers);
  EXPECT_EQ(remote->spec.arch.kv_heads, local->arch.kv_heads);
  EXPECT_EQ(remote->spec.arch.max_context, local->arch.max_context);
  EXPECT_EQ(remote->file_bytes, fs::file_size(path));
  for (int boxes = 1; boxes <= 2; ++boxes) {
    EXPECT_EQ(report_json(remote->spec, boxes), report_json(local.value(), boxes));
  }
  // Only the header crossed the wire, in growing ranges.
  EXPECT_GT(remote->requests, 1);
  EXPECT_LT(remote->bytes_read, fs::file_size(path) / 2);
  const auto reqs = hub.file_requests();
  ASSERT_EQ(static_cast<int>(reqs.size()), remote->requests);
  uint64_t asked = 0;  // what the ranges asked for (the server's own count may lag the client)
  for (const auto& r : reqs) {
    uint64_t a = 0, b = 0;
    ASSERT_EQ(std::sscanf(r.range.c_str(), "bytes=%lu-%lu", &a, &b), 2) << r.range;
    asked += b - a + 1;
  }
  EXPECT_EQ(asked, remote->bytes_read);
  EXPECT_EQ(reqs[0].range, "bytes=0-1023");
  EXPECT_EQ(reqs[1].range, "bytes=1024-2047");
  fs::remove_all(dir);
}

TEST(FitRemote, SplitModelSumsItsParts) {
  const fs::path dir = temp_dir("split");
  const std::string whole = write_model(dir, "whole.gguf");
  const auto parts = split_model(whole, dir, "tiny-Q8_0", 3);
  HubRepo repo{"test/split-GGUF", {}};
  for (const auto& p : parts) repo.files.push_back({"Q8_0/" + fs::path(p).filename().string(), p});
  TestHub hub({repo});

  auto local = gguf::File::open(parts[0]);
  ASSERT_TRUE(local.ok()) << local.status().to_string();
  auto local_spec = model_spec_from_gguf(*local);
  ASSERT_TRUE(local_spec.ok());

  // Any part's URL reads all three.
  for (const std::string& given :
       {"Q8_0/tiny-Q8_0-00001-of-00003.gguf", "Q8_0/tiny-Q8_0-00002-of-00003.gguf"}) {
    auto remote = model_spec_from_gguf_url(hub.resolve_url(repo.id, given));
    ASSERT_TRUE(remote.ok()) << remote.status().to_string();
    EXPECT_EQ(remote->n_files, 3u);
    uint64_t sum = 0;
    for (const auto& p : parts) sum += fs::file_size(p);
    EXPECT_EQ(remote->file_bytes, sum);
    EXPECT_EQ(remote->spec.weights_bytes, local_spec->weights_bytes);
    EXPECT_EQ(remote->spec.active_bytes_per_token, local_spec->active_bytes_per_token);
    EXPECT_EQ(report_json(remote->spec, 1)["verdict"], report_json(*local_spec, 1)["verdict"]);
    EXPECT_EQ(report_json(remote->spec, 1)["max_context"],
              report_json(*local_spec, 1)["max_context"]);
  }
  // The parts together hold exactly the whole file's tensors.
  auto whole_spec = model_spec_from_gguf_file(whole);
  EXPECT_EQ(whole_spec->weights_bytes, local_spec->weights_bytes);
  fs::remove_all(dir);
}

TEST(FitRemote, ClearErrors) {
  const fs::path dir = temp_dir("errors");
  const std::string model = write_model(dir, "m.gguf");
  const std::string text = (dir / "notes.gguf").string();
  std::ofstream(text) << "This is not a GGUF file, it is a README someone renamed.";
  const std::string cut = (dir / "cut.gguf").string();
  fs::copy_file(model, cut);
  fs::resize_file(cut, 700);  // the header itself is cut short
  TestHub hub({HubRepo{"test/files", {HubFile{"notes.gguf", text}, HubFile{"cut.gguf", cut}}},
               HubRepo{"test/gated", {HubFile{"m.gguf", model}}, /*gated=*/true}},
              "secret");

  auto r = model_spec_from_gguf_url(hub.resolve_url("test/files", "missing.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("404"), std::string::npos) << r.status().message();
  r = model_spec_from_gguf_url(hub.resolve_url("test/files", "notes.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a GGUF file"), std::string::npos)
      << r.status().message();
  r = model_spec_from_gguf_url(hub.resolve_url("test/files", "cut.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().to_string();
  r = model_spec_from_gguf_url(hub.resolve_url("test/gated", "m.gguf"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("token"), std::string::npos) << r.status().message();
  RemoteOptions o;
  o.bearer_token = "secret";
  r = model_spec_from_gguf_url(hub.resolve_url("test/gated", "m.gguf"), o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  r = model_spec_from_gguf_url("ftp://example.org/m.gguf");
  EXPECT_FALSE(r.ok());
  // Nothing listens on port 1.
  r = model_spec_from_gguf_url("http://127.0.0.1:1/m.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot reach"), std::string::npos) << r.status().message();
  fs::remove_all(dir);
}

// The hub sends "resolve" to its storage on another host: the token goes to the hub only.
TEST(FitRemote, TokenStaysWithTheHubAcrossARedirectToStorage) {
  const fs::path dir = temp_dir("storage");
  const std::string model = write_model(dir, "m.gguf");
  const HubRepo repo{"test/gated", {HubFile{"m.gguf", model}}, /*gated=*/true};
  TestHub storage({repo}, "secret");  // would log the token as "authorized" if it came
  TestHub hub({repo}, "secret");
  hub.set_storage_origin(storage.base_url());
  RemoteOptions o;
  o.bearer_token = "secret";
  auto r = model_spec_from_gguf_url(hub.resolve_url(repo.id, "m.gguf"), o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(hub.file_requests().empty());
  ASSERT_FALSE(storage.file_requests().empty());
  for (const auto& req : storage.file_requests()) EXPECT_FALSE(req.authorized) << req.path;
  fs::remove_all(dir);
}

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun run_cli(const std::string& args, const std::string& stderr_to) {
  const std::string cmd =
      std::string(ARC_BIN_DIR) + "/arclight-engine fit " + args + " 2>" + stderr_to;
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A 60,000-token vocabulary makes a header of about 1.3 MB, longer than the CLI's first 1 MiB
// range; the report on stdout is the same as for the local file.
TEST(FitRemote, CliUrlGivesTheLocalReport) {
  const fs::path dir = temp_dir("cli");
  const std::string path = write_model(dir, "big-vocab.gguf", 60000);
  TestHub hub({HubRepo{"test/big", {HubFile{"big-vocab.gguf", path}}}});
  const std::string log = (dir / "stderr.txt").string();
  for (const char* flags : {"--boxes 2 --context 8192 --json", "--concurrency 4"}) {
    CliRun remote = run_cli(
        fmt::format("--url {} {}", hub.resolve_url("test/big", "big-vocab.gguf"), flags), log);
    ASSERT_EQ(remote.code, 0) << remote.out;
    std::ifstream in(log);
    const std::string err((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(err.find("in 2 requests"), std::string::npos) << err;
    CliRun local = run_cli(fmt::format("--model {} {}", path, flags), "/dev/null");
    ASSERT_EQ(local.code, 0) << local.out;
    EXPECT_EQ(remote.out, local.out);
  }
  CliRun both = run_cli(fmt::format("--url {} --model {}", hub.base_url(), path), "/dev/null");
  EXPECT_EQ(both.code, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace arc::fit
