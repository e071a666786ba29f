// The vision encoder on the CUDA backend against the double-precision reference
// (tests/model/reference_vision.cpp) and against the same encoder on the CPU backend, on tiny
// random projectors: frames (segments), grids with several key tiles per frame, Qwen3-VL's head
// dim 72, F32/F16/Q8_0 matrices. Label gpu: every test skips with the factory's message where there
// is no CUDA backend, driver or device.
#include <gtest/gtest.h>

#include <cmath>

#include "arc/backend_factory.h"
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
  int64_t n_embd, n_head;
  const char* type;
};

class CudaEncoderVsReference : public ::testing::TestWithParam<Case> {};

TEST_P(CudaEncoderVsReference, MainAndDeepstackMatch) {
  const Case c = GetParam();
  auto cuda = make_cuda_backend(0, /*graphs=*/false);
  if (!cuda.ok()) GTEST_SKIP() << "no CUDA backend: " << cuda.status().message();
  TestMmprojOptions o;
  o.type = c.type;
  o.n_embd = c.n_embd;
  o.n_head = c.n_head;
  o.n_ff = 2 * c.n_embd;
  o.seed = 5;
  auto bytes = vision::build_test_mmproj(o);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto f = gguf::File::parse(*bytes, "mmproj");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ReferenceVision ref(*f);
  auto f2 = gguf::File::parse(*bytes, "mmproj");
  ASSERT_TRUE(f2.ok());
  auto enc = VisionEncoder::from_file(std::move(*f), std::move(*cuda));
  ASSERT_TRUE(enc.ok()) << enc.status().to_string();
  EXPECT_EQ((*enc)->backend_name(), "cuda");
  auto cpu = VisionEncoder::from_file(std::move(*f2), make_cpu_backend(2));
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();

  const PatchGrid g = random_grid(c.t, c.h, c.w, o.patch_size, 11);
  auto got = (*enc)->encode(g);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  auto on_cpu = (*cpu)->encode(g);
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.status().to_string();
  const auto want = ref.encode(g.pixels, c.t, c.h, c.w);
  const int64_t n_tok = static_cast<int64_t>(c.t) * c.h * c.w / 4;
  EXPECT_EQ(got->n_tokens, n_tok);
  EXPECT_EQ(got->grid_h, c.h / 2);
  EXPECT_EQ(got->grid_w, c.w / 2);
  ASSERT_EQ(got->main.size(), static_cast<size_t>(n_tok * o.proj_dim));
  // The CUDA prefill matmul multiplies in F16 on tensor cores (F32 accumulation): ~1e-3 per
  // product, a few of them in a row. Q8_0: both sides may quantize activations.
  const double tol = std::string(c.type) == "Q8_0" ? 5e-2 : 1e-2;
  EXPECT_LT(rel_err(got->main, want.main), tol) << "main vs reference";
  EXPECT_LT(rel_err(got->main, on_cpu->main), tol) << "main vs the CPU backend";
  ASSERT_EQ(got->deepstack.size(), o.deepstack_layers.size());
  for (size_t k = 0; k < want.deepstack.size(); ++k) {
    EXPECT_LT(rel_err(got->deepstack[k], want.deepstack[k]), tol) << "deepstack " << k;
    EXPECT_LT(rel_err(got->deepstack[k], on_cpu->deepstack[k]), tol) << "deepstack " << k;
  }
  // A second image of another size reuses (and grows) the activations.
  const PatchGrid g2 = random_grid(1, c.h + 2, c.w, o.patch_size, 12);
  auto got2 = (*enc)->encode(g2);
  ASSERT_TRUE(got2.ok()) << got2.status().to_string();
  const auto want2 = ref.encode(g2.pixels, 1, c.h + 2, c.w);
  EXPECT_LT(rel_err(got2->main, want2.main), tol) << "second image";
}

INSTANTIATE_TEST_SUITE_P(Grids, CudaEncoderVsReference,
                         ::testing::Values(Case{"square", 1, 4, 4, 32, 2, "F32"},
                                           Case{"two_frames", 2, 4, 2, 32, 2, "F32"},
                                           Case{"several_key_tiles", 1, 12, 10, 32, 2, "F32"},
                                           Case{"head_dim_72", 2, 6, 8, 144, 2, "F32"},
                                           Case{"f16", 1, 6, 4, 32, 2, "F16"},
                                           Case{"q8", 1, 6, 4, 64, 2, "Q8_0"}),
                         [](const auto& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace arc::testing
