// Config from metadata, the per-family tensor tables, and clear errors for bad files.
#include <gtest/gtest.h>

#include <set>

#include "arc/model_arch.h"
#include "model/test_util.h"

namespace arc::testing {
namespace {

// Copies a GGUF image, optionally dropping a tensor, reshaping one (with matching bytes) or
// overriding a metadata key.
std::vector<uint8_t> rewrite(const std::vector<uint8_t>& bytes, const std::string& drop,
                             const std::string& reshape = "",
                             std::pair<std::string, gguf::Value> meta = {}) {
  auto f = gguf::File::parse(bytes, "src");
  EXPECT_TRUE(f.ok());
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) {
    if (k != "general.alignment") w.set(k, v);
  }
  if (!meta.first.empty()) w.set(meta.first, meta.second);
  for (const auto& t : f->tensors()) {
    if (t.name == drop) continue;
    auto data = f->tensor_data(t);
    std::vector<int64_t> shape = t.shape;
    if (t.name == reshape) {  // half the rows
      shape[1] /= 2;
      data = data.subspan(0, data.size() / 2);
    }
    EXPECT_TRUE(w.add_tensor(t.name, t.type, shape, data).ok());
  }
  return w.to_bytes();
}

Status load_status(const std::vector<uint8_t>& bytes) {
  auto f = gguf::File::parse(bytes, "bad.gguf");
  if (!f.ok()) return f.status();
  auto be = make_cpu_backend(1);
  auto m = Model::from_file(std::move(f).value(), *be);
  return m.ok() ? ok_status() : m.status();
}

TEST(ModelConfig, ReadsEveryFamily) {
  struct F {
    Family fam;
    int64_t experts;
    FfnKind ffn;
  };
  for (F x : {F{Family::kQwen3Moe, 8, FfnKind::kMoe}, F{Family::kQwen2Moe, 4, FfnKind::kMoeShared},
              F{Family::kLlama, 0, FfnKind::kDense}, F{Family::kLlama, 4, FfnKind::kMoe},
              F{Family::kQwen3, 0, FfnKind::kDense}}) {
    TestModelOptions o;
    o.family = x.fam;
    o.n_expert = x.experts;
    o.n_layer = 3;
    o.n_embd = 64;
    o.n_head = 8;
    o.n_kv_head = 2;
    o.head_dim = 8;
    o.n_ff_exp = 48;
    auto bytes = build_test_model(o);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    auto f = gguf::File::parse(*bytes, "t");
    ASSERT_TRUE(f.ok());
    auto cfg = config_from_gguf(*f);
    ASSERT_TRUE(cfg.ok()) << cfg.status().to_string();
    EXPECT_EQ(cfg->family, x.fam);
    EXPECT_EQ(cfg->ffn, x.ffn);
    EXPECT_EQ(cfg->n_layer, 3);
    EXPECT_EQ(cfg->n_head, 8);
    EXPECT_EQ(cfg->n_kv_head, 2);
    EXPECT_EQ(cfg->head_dim, 8);
    EXPECT_EQ(cfg->n_vocab, 259);  // synthetic byte vocabulary + 3 specials
    EXPECT_EQ(cfg->n_expert, x.experts);
    if (x.experts) {
      EXPECT_EQ(cfg->n_ff_exp, 48);
    }
    EXPECT_EQ(cfg->qk_norm, x.fam == Family::kQwen3 || x.fam == Family::kQwen3Moe);
    EXPECT_EQ(cfg->qkv_bias, x.fam == Family::kQwen2Moe);
    EXPECT_EQ(cfg->norm_topk, x.fam != Family::kQwen2Moe);
    EXPECT_TRUE(cfg->tied_embeddings);
    EXPECT_TRUE(validate_tensors(*f, *cfg).ok());
  }
}

TEST(ModelArch, TensorWalkListsEachTensorOnceWithSplits) {
  ModelConfig c;
  c.family = Family::kQwen2Moe;
  c.ffn = FfnKind::kMoeShared;
  c.n_layer = 2;
  c.n_embd = 32;
  c.n_vocab = 100;
  c.n_head = 4;
  c.n_kv_head = 2;
  c.head_dim = 8;
  c.n_expert = 4;
  c.n_expert_used = 2;
  c.n_ff_exp = 16;
  c.n_ff_shexp = 24;
  c.qkv_bias = true;
  std::set<std::string> names;
  int n = 0;
  for_each_tensor(c, [&](const TensorRef& r) {
    names.insert(r.name);
    ++n;
    if (r.name == "blk.1.ffn_down_exps.weight") {
      EXPECT_EQ(r.shape, (std::vector<int64_t>{16, 32, 4}));
      EXPECT_EQ(r.spec->split, Split::kExpertCols);
    }
    if (r.name == "blk.0.attn_q.weight") {
      EXPECT_EQ(r.spec->split, Split::kRowsByHead);
    }
    if (r.name == "blk.0.attn_output.weight") {
      EXPECT_EQ(r.spec->split, Split::kColsByHead);
    }
    if (r.name == "blk.0.ffn_gate_inp.weight") {
      EXPECT_EQ(r.spec->split, Split::kReplicated);
    }
    if (r.name == "output.weight") {
      EXPECT_EQ(r.spec->split, Split::kVocab);
    }
  });
  EXPECT_EQ(static_cast<size_t>(n), names.size());
  // 3 globals (embedding, output norm, output) + 2 x 17 per layer (8 attention, norm, 4 routed, 4
  // shared).
  EXPECT_EQ(n, 3 + 2 * 17);
  EXPECT_TRUE(names.count("blk.1.ffn_gate_inp_shexp.weight"));
  EXPECT_FALSE(names.count("blk.0.attn_q_norm.weight"));
}

TEST(ModelErrors, UnknownFamilyMissingTensorWrongShape) {
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  auto bytes = build_test_model(o);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(load_status(*bytes).ok());

  Status s =
      load_status(rewrite(*bytes, "", "", {"general.architecture", gguf::Value::str("gpt9")}));
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("unsupported model architecture 'gpt9'"), std::string::npos)
      << s.message();

  s = load_status(rewrite(*bytes, "blk.1.ffn_up_exps.weight"));
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("tensor 'blk.1.ffn_up_exps.weight' is missing (expected shape [64, "
                             "32, 8])"),
            std::string::npos)
      << s.message();

  s = load_status(rewrite(*bytes, "", "blk.0.attn_k.weight"));
  EXPECT_NE(s.message().find("tensor 'blk.0.attn_k.weight' has shape [64, 16], expected [64, 32]"),
            std::string::npos)
      << s.message();

  s = load_status(rewrite(*bytes, "", "", {"qwen3moe.expert_used_count", gguf::Value::u32(99)}));
  EXPECT_NE(s.message().find("expert_used_count"), std::string::npos) << s.message();

  // Drop a required metadata key by renaming the architecture's prefix.
  s = load_status(rewrite(*bytes, "", "", {"general.architecture", gguf::Value::str("qwen3")}));
  EXPECT_NE(s.message().find("missing metadata key 'qwen3.block_count'"), std::string::npos)
      << s.message();
}

TEST(ModelWeights, UsedInPlaceFromTheFile) {
  TestModelOptions o;
  o.type = "Q8_0";
  auto e = make_engine(o);
  ASSERT_TRUE(e.ok());
  const auto& w = e->model->layer(1, TensorRole::kAttnQ);
  const uint8_t* lo = e->bytes.data();
  const uint8_t* hi = lo + e->bytes.size();
  const auto* p = static_cast<const uint8_t*>(w.data);
  EXPECT_TRUE(p >= lo && p + w.n_bytes <= hi);  // a pointer into the image, not a copy
  EXPECT_EQ(w.type, DType::Q8_0);
  EXPECT_EQ(e->model->layer(1, TensorRole::kAttnNorm).type, DType::F32);
  EXPECT_EQ(e->model->layer(1, TensorRole::kFfnRouter).type, DType::F32);
}

}  // namespace
}  // namespace arc::testing
