#include "arc/eval/logit_file.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace arc::eval {
namespace {

constexpr char kMagic[8] = {'A', 'R', 'C', 'E', 'V', 'L', 'G', '1'};
constexpr int64_t kMaxTopK = 4096;

// Bytes of one scored token's record: the fixed part, then 8 per kept entry.
constexpr int64_t kRowFixed = sizeof(float) + 2 * sizeof(double) + 2 * sizeof(int32_t);
constexpr int64_t kEntryBytes = sizeof(int32_t) + sizeof(float);

template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
T get(const char*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}

}  // namespace

Status write_reference_logits(const std::string& path, const ReferenceLogits& ref) {
  const CompressedLogits& c = ref.rows;
  const nlohmann::json h = {
      {"model", ref.model},
      {"tokenizer_fingerprint", ref.tokenizer_fingerprint},
      {"text", ref.text_name},
      {"ctx", ref.ctx},
      {"stride", ref.stride},
      {"n_vocab", ref.n_vocab},
      {"top_k", c.k},
      {"tail_target", c.tail_target},
      {"samples", c.samples},
      {"n_samples", c.sample_ids.size()},
      {"windows_done", ref.windows_done},
      {"n_rows", c.n_rows()},
      {"n_entries", c.ids.size()},
      {"tokens", ref.tokens},
  };
  const std::string header = h.dump();
  std::string out;
  out.reserve(header.size() + 16 + static_cast<size_t>(c.n_rows() * kRowFixed) +
              (c.ids.size() + c.sample_ids.size()) * kEntryBytes);
  out.append(kMagic, sizeof kMagic);
  put(out, static_cast<uint64_t>(header.size()));
  out += header;
  for (int64_t r = 0; r < c.n_rows(); ++r) {
    put(out, c.target_logp[r]);
    put(out, c.tail_mass[r]);
    put(out, c.tail_plogp[r]);
    put(out, static_cast<int32_t>(c.begin[r + 1] - c.begin[r]));
    for (int64_t j = c.begin[r]; j < c.begin[r + 1]; ++j) {
      put(out, c.ids[j]);
      put(out, c.logp[j]);
    }
    put(out, static_cast<int32_t>(c.sample_begin[r + 1] - c.sample_begin[r]));
    for (int64_t j = c.sample_begin[r]; j < c.sample_begin[r + 1]; ++j) {
      put(out, c.sample_ids[j]);
      put(out, c.sample_logp[j]);
    }
  }
  // Written beside and renamed: an interrupted write never leaves a truncated file behind.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return {StatusCode::kIo, "cannot write " + tmp + ": check the folder exists"};
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f.flush()) return {StatusCode::kIo, "writing " + tmp + " failed (disk full?)"};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return {StatusCode::kIo, "cannot rename " + tmp + " to " + path};
  }
  return ok_status();
}

Result<ReferenceLogits> read_reference_logits(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("cannot open reference logits " + path);
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    return data_loss(path +
                     " is not a reference-logits file of arclight-engine eval --save-logits (" +
                     why + "); save it again");
  };
  if (data.size() < 16 || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    return bad("wrong magic");
  }
  const char* p = data.data() + 8;
  const uint64_t hlen = get<uint64_t>(p);
  if (hlen > data.size() - 16) return bad("header runs past the end");
  nlohmann::json h = nlohmann::json::parse(p, p + hlen, nullptr, false);
  p += hlen;
  if (h.is_discarded() || !h.is_object()) return bad("header is not JSON");
  ReferenceLogits ref;
  try {
    ref.model = h.at("model").get<std::string>();
    ref.tokenizer_fingerprint = h.at("tokenizer_fingerprint").get<std::string>();
    ref.text_name = h.at("text").get<std::string>();
    ref.ctx = h.at("ctx").get<int64_t>();
    ref.stride = h.at("stride").get<int64_t>();
    ref.n_vocab = h.at("n_vocab").get<int64_t>();
    ref.rows.k = h.at("top_k").get<int32_t>();
    ref.rows.tail_target = h.at("tail_target").get<double>();
    ref.rows.samples = h.at("samples").get<int32_t>();
    ref.windows_done = h.at("windows_done").get<int64_t>();
    ref.tokens = h.at("tokens").get<std::vector<int32_t>>();
  } catch (const nlohmann::json::exception& e) {
    return bad(std::string("header field: ") + e.what());
  }
  const int64_t n_rows = h.value("n_rows", int64_t{-1});
  const int64_t n_entries = h.value("n_entries", int64_t{-1});
  const int64_t n_samples = h.value("n_samples", int64_t{-1});
  const int64_t n_per = ref.rows.samples;
  const int64_t k = ref.rows.k;
  if (k < 1 || k > kMaxTopK || ref.n_vocab < 1 || ref.ctx < 4 || n_rows < 0 ||
      ref.windows_done < 0 || n_entries < n_rows || n_entries > n_rows * k || n_per < 0 ||
      n_per > kMaxTopK || n_samples < 0 || n_samples > n_rows * n_per) {
    return bad("header values out of range");
  }
  const int64_t left = static_cast<int64_t>(data.data() + data.size() - p);
  const int64_t want = n_rows * kRowFixed + (n_entries + n_samples) * kEntryBytes;
  if (left != want) {
    return bad("expected " + std::to_string(want) + " bytes of rows, found " +
               std::to_string(left) + ": truncated");
  }
  for (int32_t t : ref.tokens) {
    if (t < 0 || t >= ref.n_vocab) return bad("token id outside the vocabulary");
  }
  CompressedLogits& c = ref.rows;
  c.ids.reserve(static_cast<size_t>(n_entries));
  c.logp.reserve(static_cast<size_t>(n_entries));
  c.tail_mass.resize(static_cast<size_t>(n_rows));
  c.tail_plogp.resize(static_cast<size_t>(n_rows));
  c.target_logp.resize(static_cast<size_t>(n_rows));
  for (int64_t r = 0; r < n_rows; ++r) {
    c.target_logp[r] = get<float>(p);
    c.tail_mass[r] = get<double>(p);
    c.tail_plogp[r] = get<double>(p);
    const int32_t count = get<int32_t>(p);
    const int64_t have = static_cast<int64_t>(c.ids.size());
    if (!(c.target_logp[r] <= 0) || !(c.tail_mass[r] >= 0 && c.tail_mass[r] <= 1) ||
        !(c.tail_plogp[r] <= 0) || std::isinf(c.tail_plogp[r]) || count < 1 || count > k ||
        have + count > n_entries) {
      return bad("row " + std::to_string(r) + " holds impossible values");
    }
    for (int32_t j = 0; j < count; ++j) {
      const int32_t id = get<int32_t>(p);
      const float lp = get<float>(p);
      if (id < 0 || id >= ref.n_vocab || !(lp <= 0)) {
        return bad("row " + std::to_string(r) + " holds impossible values");
      }
      c.ids.push_back(id);
      c.logp.push_back(lp);
    }
    c.begin.push_back(static_cast<int64_t>(c.ids.size()));
    const int32_t ns = get<int32_t>(p);
    if ((ns != 0 && ns != n_per) || static_cast<int64_t>(c.sample_ids.size()) + ns > n_samples) {
      return bad("row " + std::to_string(r) + " holds impossible values");
    }
    for (int32_t j = 0; j < ns; ++j) {
      const int32_t id = get<int32_t>(p);
      const float lp = get<float>(p);
      if (id < 0 || id >= ref.n_vocab || !(lp <= 0)) {
        return bad("row " + std::to_string(r) + " holds impossible values");
      }
      c.sample_ids.push_back(id);
      c.sample_logp.push_back(lp);
    }
    c.sample_begin.push_back(static_cast<int64_t>(c.sample_ids.size()));
  }
  if (static_cast<int64_t>(c.ids.size()) != n_entries ||
      static_cast<int64_t>(c.sample_ids.size()) != n_samples) {
    return bad("entry count differs");
  }
  return ref;
}

}  // namespace arc::eval
