// The layout of a Qwen3-VL vision-projector GGUF ("mmproj") as llama.cpp's convert_hf_to_gguf.py
// (Qwen3VLVisionModel) writes it: metadata keys and every tensor with its shape in terms of the
// config. One walk (for_each_vision_tensor) serves validation, loading and the test generator.
//
// Names (GGUF order shapes, shape[0] is the row length; E = n_embd, M = E * merge^2, P = patch):
//   v.patch_embd.weight      [P, P, 3, E]  Conv3d kernel, temporal frame 0 (HF proj.weight[:, :,
//   0]) v.patch_embd.weight.1    [P, P, 3, E]  temporal frame 1 v.patch_embd.bias        [E]
//   v.position_embd.weight   [E, side^2]   learned positions on a side x side grid
//   v.blk.N.ln1.{weight,bias} [E]          pre-attention LayerNorm
//   v.blk.N.attn_qkv.{weight [E, 3E], bias [3E]}   rows: q, then k, then v
//   v.blk.N.attn_out.{weight [E, E], bias [E]}
//   v.blk.N.ln2.{weight,bias} [E]          pre-MLP LayerNorm
//   v.blk.N.ffn_up.{weight [E, F], bias [F]}, v.blk.N.ffn_down.{weight [F, E], bias [E]}
//   v.post_ln.{weight,bias}  [E]           the merger's norm (per patch, before the 2x2 merge)
//   mm.0.{weight [M, M], bias [M]}, mm.2.{weight [M, D], bias [D]}   merger MLP, D = projection_dim
//   v.deepstack.L.norm.{weight,bias} [M]   deepstack merger after encoder layer L (norm after
//   merge) v.deepstack.L.fc1.{weight [M, M], bias [M]}, v.deepstack.L.fc2.{weight [M, D], bias [D]}
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "arc/vision_encoder.h"

namespace arc::vision {

// Metadata keys (clip.* as gguf-py's Keys.Clip / Keys.ClipVision spell them).
namespace key {
inline constexpr std::string_view kArchitecture = "general.architecture";  // "clip"
inline constexpr std::string_view kHasVision = "clip.has_vision_encoder";
inline constexpr std::string_view kProjectorType = "clip.projector_type";
inline constexpr std::string_view kVisionProjectorType =
    "clip.vision.projector_type";  // omni files
inline constexpr std::string_view kUseGelu = "clip.use_gelu";
inline constexpr std::string_view kImageSize = "clip.vision.image_size";
inline constexpr std::string_view kPatchSize = "clip.vision.patch_size";
inline constexpr std::string_view kEmbd = "clip.vision.embedding_length";
inline constexpr std::string_view kFf = "clip.vision.feed_forward_length";
inline constexpr std::string_view kBlocks = "clip.vision.block_count";
inline constexpr std::string_view kHeads = "clip.vision.attention.head_count";
inline constexpr std::string_view kEps = "clip.vision.attention.layer_norm_epsilon";
inline constexpr std::string_view kProjDim = "clip.vision.projection_dim";
inline constexpr std::string_view kMergeSize = "clip.vision.spatial_merge_size";
inline constexpr std::string_view kImageMean = "clip.vision.image_mean";
inline constexpr std::string_view kImageStd = "clip.vision.image_std";
inline constexpr std::string_view kDeepstack =
    "clip.vision.is_deepstack_layers";  // [bool] per layer
}  // namespace key

inline constexpr std::string_view kClipArch = "clip";
inline constexpr std::string_view kQwen3vlProjector = "qwen3vl_merger";

// What a tensor is for. Values index arrays: append only.
enum class VRole : int {
  // globals
  kPatch0 = 0,
  kPatch1,
  kPatchBias,
  kPosEmbd,
  kPostLnW,
  kPostLnB,
  kMm0W,
  kMm0B,
  kMm2W,
  kMm2B,
  // per encoder block
  kLn1W,
  kLn1B,
  kQkvW,
  kQkvB,
  kOutW,
  kOutB,
  kLn2W,
  kLn2B,
  kUpW,
  kUpB,
  kDownW,
  kDownB,
  // per deepstack merger
  kDsNormW,
  kDsNormB,
  kDsFc1W,
  kDsFc1B,
  kDsFc2W,
  kDsFc2B,
  kCount
};

enum class VScope : uint8_t { kGlobal, kBlock, kDeepstack };

// Symbolic dimensions, resolved against a VisionConfig.
enum class VDim : uint8_t { kEmbd, kFf, kQkv, kMerged, kProj, kPatch, kChannels, kPositions };

struct VisionTensorSpec {
  VRole role;
  std::string_view name;  // full name, or the suffix after "v.blk.N." / "v.deepstack.L."
  VScope scope;
  std::array<VDim, 4> dims;
  int n_dims;
};

inline constexpr VisionTensorSpec kVisionTensors[] = {
    {VRole::kPatch0,
     "v.patch_embd.weight",
     VScope::kGlobal,
     {VDim::kPatch, VDim::kPatch, VDim::kChannels, VDim::kEmbd},
     4},
    {VRole::kPatch1,
     "v.patch_embd.weight.1",
     VScope::kGlobal,
     {VDim::kPatch, VDim::kPatch, VDim::kChannels, VDim::kEmbd},
     4},
    {VRole::kPatchBias, "v.patch_embd.bias", VScope::kGlobal, {VDim::kEmbd}, 1},
    {VRole::kPosEmbd,
     "v.position_embd.weight",
     VScope::kGlobal,
     {VDim::kEmbd, VDim::kPositions},
     2},
    {VRole::kPostLnW, "v.post_ln.weight", VScope::kGlobal, {VDim::kEmbd}, 1},
    {VRole::kPostLnB, "v.post_ln.bias", VScope::kGlobal, {VDim::kEmbd}, 1},
    {VRole::kMm0W, "mm.0.weight", VScope::kGlobal, {VDim::kMerged, VDim::kMerged}, 2},
    {VRole::kMm0B, "mm.0.bias", VScope::kGlobal, {VDim::kMerged}, 1},
    {VRole::kMm2W, "mm.2.weight", VScope::kGlobal, {VDim::kMerged, VDim::kProj}, 2},
    {VRole::kMm2B, "mm.2.bias", VScope::kGlobal, {VDim::kProj}, 1},
    {VRole::kLn1W, "ln1.weight", VScope::kBlock, {VDim::kEmbd}, 1},
    {VRole::kLn1B, "ln1.bias", VScope::kBlock, {VDim::kEmbd}, 1},
    {VRole::kQkvW, "attn_qkv.weight", VScope::kBlock, {VDim::kEmbd, VDim::kQkv}, 2},
    {VRole::kQkvB, "attn_qkv.bias", VScope::kBlock, {VDim::kQkv}, 1},
    {VRole::kOutW, "attn_out.weight", VScope::kBlock, {VDim::kEmbd, VDim::kEmbd}, 2},
    {VRole::kOutB, "attn_out.bias", VScope::kBlock, {VDim::kEmbd}, 1},
    {VRole::kLn2W, "ln2.weight", VScope::kBlock, {VDim::kEmbd}, 1},
    {VRole::kLn2B, "ln2.bias", VScope::kBlock, {VDim::kEmbd}, 1},
    {VRole::kUpW, "ffn_up.weight", VScope::kBlock, {VDim::kEmbd, VDim::kFf}, 2},
    {VRole::kUpB, "ffn_up.bias", VScope::kBlock, {VDim::kFf}, 1},
    {VRole::kDownW, "ffn_down.weight", VScope::kBlock, {VDim::kFf, VDim::kEmbd}, 2},
    {VRole::kDownB, "ffn_down.bias", VScope::kBlock, {VDim::kEmbd}, 1},
    {VRole::kDsNormW, "norm.weight", VScope::kDeepstack, {VDim::kMerged}, 1},
    {VRole::kDsNormB, "norm.bias", VScope::kDeepstack, {VDim::kMerged}, 1},
    {VRole::kDsFc1W, "fc1.weight", VScope::kDeepstack, {VDim::kMerged, VDim::kMerged}, 2},
    {VRole::kDsFc1B, "fc1.bias", VScope::kDeepstack, {VDim::kMerged}, 1},
    {VRole::kDsFc2W, "fc2.weight", VScope::kDeepstack, {VDim::kMerged, VDim::kProj}, 2},
    {VRole::kDsFc2B, "fc2.bias", VScope::kDeepstack, {VDim::kProj}, 1},
};

// A concrete tensor of a concrete projector.
struct VisionTensorRef {
  const VisionTensorSpec* spec = nullptr;
  int64_t index = -1;  // block index, or deepstack slot (0..n_deepstack-1); -1 for globals
  int64_t layer = -1;  // encoder layer of a deepstack merger (its name uses the layer)
  std::string name;
  std::vector<int64_t> shape;
};

int64_t resolve_vision_dim(const VisionConfig& c, VDim d);
// Globals, then block by block, then each deepstack merger.
void for_each_vision_tensor(const VisionConfig& c,
                            const std::function<void(const VisionTensorRef&)>& fn);

}  // namespace arc::vision
