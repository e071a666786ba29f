// The vision encoder against the double-precision reference (tests/model/reference_vision.cpp)
// on tiny random projectors, and the loader's errors on malformed projectors.
#include <gtest/gtest.h>

#include <cmath>

#include "arc/vision_encoder.h"
#include "model/reference_vision.h"
#include "model/vision_test_util.h"
#include "vision/test_mmproj.h"

namespace arc::testing {
namespace {

using vision::PatchGrid;
using vision::TestMmprojOptions;
using vision::VisionEncoder;

struct Case {
  const char* name;
  int t, h, w;
  const char* type;
};

class EncoderVsReference : public ::testing::TestWithParam<Case> {};

TEST_P(EncoderVsReference, MainAndDeepstackMatch) {
  const Case c = GetParam();
  TestMmprojOptions o;
  o.type = c.type;
  o.seed = 3;
  auto bytes = vision::build_test_mmproj(o);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto f = gguf::File::parse(*bytes, "mmproj");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ReferenceVision ref(*f);
  auto enc = VisionEncoder::from_file(std::move(*f), 2);
  ASSERT_TRUE(enc.ok()) << enc.status().to_string();

  const PatchGrid g = random_grid(c.t, c.h, c.w, o.patch_size, 11);
  auto got = (*enc)->encode(g);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  const auto want = ref.encode(g.pixels, c.t, c.h, c.w);
  const int64_t n_tok = static_cast<int64_t>(c.t) * c.h * c.w / 4;
  EXPECT_EQ(got->n_tokens, n_tok);
  EXPECT_EQ(got->n_embd, o.proj_dim);
  EXPECT_EQ(got->grid_h, c.h / 2);
  EXPECT_EQ(got->grid_w, c.w / 2);
  ASSERT_EQ(want.main.size(), static_cast<size_t>(n_tok));
  ASSERT_EQ(got->main.size(), static_cast<size_t>(n_tok * o.proj_dim));
  // F32 weights: float rounding only. Q8_0: the kernels may quantize activations too.
  const double tol = std::string(c.type) == "F32" ? 1e-4 : 3e-2;
  EXPECT_LT(rel_err(got->main, want.main), tol);
  ASSERT_EQ(got->deepstack.size(), o.deepstack_layers.size());
  ASSERT_EQ(want.deepstack.size(), o.deepstack_layers.size());
  for (size_t k = 0; k < want.deepstack.size(); ++k) {
    EXPECT_LT(rel_err(got->deepstack[k], want.deepstack[k]), tol) << "deepstack " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Grids, EncoderVsReference,
                         ::testing::Values(Case{"square", 1, 4, 4, "F32"},
                                           Case{"wide", 1, 2, 6, "F32"},
                                           Case{"tall_and_large", 1, 10, 4, "F32"},
                                           Case{"two_frames", 2, 4, 2, "F32"},
                                           Case{"q8", 1, 6, 4, "Q8_0"}),
                         [](const auto& i) { return std::string(i.param.name); });

TEST(VisionEncoder, PositionsAndRotaryMatterAndImagesDiffer) {
  // Different images give different embeddings; the same image gives the same (deterministic).
  TestMmprojOptions o;
  auto bytes = vision::build_test_mmproj(o);
  ASSERT_TRUE(bytes.ok());
  auto f = gguf::File::parse(*bytes, "mmproj");
  ASSERT_TRUE(f.ok());
  auto enc = VisionEncoder::from_file(std::move(*f), 1);
  ASSERT_TRUE(enc.ok());
  const PatchGrid a = random_grid(1, 4, 4, o.patch_size, 1);
  const PatchGrid b = random_grid(1, 4, 4, o.patch_size, 2);
  auto ea = (*enc)->encode(a), ea2 = (*enc)->encode(a), eb = (*enc)->encode(b);
  ASSERT_TRUE(ea.ok() && ea2.ok() && eb.ok());
  EXPECT_EQ(ea->main, ea2->main);
  EXPECT_NE(ea->main, eb->main);
}

TEST(VisionEncoder, RejectsBadGrids) {
  TestMmprojOptions o;
  auto bytes = vision::build_test_mmproj(o);
  ASSERT_TRUE(bytes.ok());
  auto f = gguf::File::parse(*bytes, "mmproj");
  ASSERT_TRUE(f.ok());
  auto enc = VisionEncoder::from_file(std::move(*f), 1);
  ASSERT_TRUE(enc.ok());
  PatchGrid odd = random_grid(1, 3, 4, o.patch_size, 1);
  EXPECT_NE((*enc)->encode(odd).status().message().find("merge size"), std::string::npos);
  PatchGrid wrong_patch = random_grid(1, 4, 4, o.patch_size + 1, 1);
  EXPECT_NE((*enc)->encode(wrong_patch).status().message().find("patch"), std::string::npos);
  PatchGrid short_buf = random_grid(1, 4, 4, o.patch_size, 1);
  short_buf.pixels.pop_back();
  EXPECT_FALSE((*enc)->encode(short_buf).ok());
  PatchGrid empty;
  EXPECT_FALSE((*enc)->encode(empty).ok());
  PatchGrid huge;
  huge.t = 1;
  huge.h = huge.w = 1024;
  huge.patch_dim = static_cast<int>(3 * 2 * o.patch_size * o.patch_size);
  EXPECT_NE((*enc)->encode(huge).status().message().find("at most"), std::string::npos);
}

// A projector with one metadata key or tensor changed.
std::vector<uint8_t> edited(const std::function<void(gguf::Writer&)>& edit,
                            const std::string& drop_tensor = "",
                            const std::string& reshape_tensor = "") {
  TestMmprojOptions o;
  auto bytes = vision::build_test_mmproj(o);
  auto f = gguf::File::parse(*bytes, "mmproj");
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  for (const gguf::TensorInfo& t : f->tensors()) {
    if (t.name == drop_tensor) continue;
    std::vector<int64_t> shape = t.shape;
    auto data = f->tensor_data(t);
    if (t.name == reshape_tensor) std::swap(shape[0], shape[1]);
    EXPECT_TRUE(w.add_tensor(t.name, t.type, shape, data).ok());
  }
  edit(w);
  return w.to_bytes();
}

std::string load_error(const std::vector<uint8_t>& bytes) {
  auto f = gguf::File::parse(bytes, "bad-mmproj");
  if (!f.ok()) return f.status().to_string();
  auto enc = VisionEncoder::from_file(std::move(*f), 1);
  return enc.ok() ? "" : enc.status().to_string();
}

TEST(VisionEncoder, LoaderNamesWhatIsWrong) {
  EXPECT_NE(load_error(edited([](gguf::Writer& w) {
              w.set("general.architecture", gguf::Value::str("qwen3moe"));
            })).find("not a vision projector"),
            std::string::npos);
  EXPECT_NE(load_error(edited([](gguf::Writer& w) {
              w.set("clip.projector_type", gguf::Value::str("mlp"));
            })).find("'mlp' is not supported"),
            std::string::npos);
  EXPECT_NE(load_error(edited([](gguf::Writer& w) {
              w.set("clip.vision.attention.head_count", gguf::Value::u32(5));
            })).find("multiple of head_count"),
            std::string::npos);
  EXPECT_NE(load_error(edited([](gguf::Writer& w) {
              gguf::Array a;
              a.elem_type = gguf::ValueType::kBool;
              a.items.push_back(gguf::Value::boolean(true));
              w.set("clip.vision.is_deepstack_layers", gguf::Value::array(std::move(a)));
            })).find("is_deepstack_layers"),
            std::string::npos);
  EXPECT_NE(load_error(edited([](gguf::Writer&) {}, "v.blk.1.ffn_down.weight"))
                .find("missing tensor 'v.blk.1.ffn_down.weight'"),
            std::string::npos);
  EXPECT_NE(load_error(edited([](gguf::Writer&) {}, "v.patch_embd.weight.1"))
                .find("second temporal slice"),
            std::string::npos);
  EXPECT_NE(
      load_error(edited([](gguf::Writer&) {}, "", "mm.2.weight")).find("'mm.2.weight' has shape"),
      std::string::npos);
  EXPECT_NE(load_error(edited([](gguf::Writer&) {}, "v.deepstack.1.fc2.bias"))
                .find("v.deepstack.1.fc2.bias"),
            std::string::npos);
  EXPECT_EQ(load_error(edited([](gguf::Writer&) {})), "");
}

}  // namespace
}  // namespace arc::testing
