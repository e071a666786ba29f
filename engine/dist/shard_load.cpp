// load_model_shard: the streamed path reads each tensor's part for this rank with
// WeightStreamer::stream_file_rows; the mapped path shards the mapped model in place.
#include "arc/shard_load.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "arc/backend_caps.h"
#include "arc/log.h"

namespace arc {
namespace {

// Where one tensor lies in the (split) files.
struct FilePlace {
  const std::string* path = nullptr;
  uint64_t offset = 0;
  const uint8_t* mapped = nullptr;  // the tensor's bytes in the file's mapping
};

// A rank's part of one tensor as a strided read: `n_rows` rows of `stride` bytes from the
// tensor's first byte, of which bytes [take_offset, take_offset + take_bytes) are kept; and the
// weight's shape once narrowed.
struct PartRead {
  uint64_t n_rows = 1, stride = 0, take_offset = 0, take_bytes = 0;
  bool gathered = false;  // several ranges or zero fill: assembled in host memory (small tensors)
};

PartRead part_of(const ShardPlan& plan, const TensorRef& ref, Weight& w) {
  const TensorShard s = tensor_shard(plan, ref);
  PartRead r;
  if (s.gathered()) {
    r.gathered = true;
    narrow_weight(w, s);
    return r;
  }
  if (s.whole) {
    r.stride = r.take_bytes = w.n_bytes;
    return r;
  }
  const int64_t n_slices = w.shape.size() > 2 ? w.shape[2] : 1;
  if (s.slices) {  // slices [begin, begin + count): one byte range
    r.stride = w.n_bytes;
    r.take_offset = static_cast<uint64_t>(s.begin) * w.slice_bytes;
    r.take_bytes = static_cast<uint64_t>(s.count) * w.slice_bytes;
    w.shape[2] = s.count;
    w.n_bytes = r.take_bytes;
    return r;
  }
  if (!s.columns) {
    // Rows [begin, begin + count) of every expert slice; the slices end up packed.
    r.n_rows = static_cast<uint64_t>(n_slices);
    r.stride = w.slice_bytes;
    r.take_offset = static_cast<uint64_t>(s.begin) * w.row_bytes;
    r.take_bytes = static_cast<uint64_t>(s.count) * w.row_bytes;
    w.shape[1] = s.count;
    w.slice_bytes = static_cast<size_t>(r.take_bytes);
    w.n_bytes = r.take_bytes * r.n_rows;
    return r;
  }
  // Columns [begin, begin + count) of every row, on quantization-block boundaries (the plan
  // checked them).
  const DTypeInfo* info = dtype_info(w.type);
  const int64_t rows = (w.shape.size() > 1 ? w.shape[1] : 1) * n_slices;
  r.n_rows = static_cast<uint64_t>(rows);
  r.stride = w.row_bytes;
  r.take_offset = static_cast<uint64_t>(s.begin / info->block_elems) * info->block_bytes;
  r.take_bytes = static_cast<uint64_t>(s.count / info->block_elems) * info->block_bytes;
  w.shape[0] = s.count;
  w.row_bytes = static_cast<size_t>(r.take_bytes);
  w.slice_bytes = w.row_bytes * static_cast<size_t>(w.shape.size() > 1 ? w.shape[1] : 1);
  w.n_bytes = r.take_bytes * r.n_rows;
  return r;
}

// A Weight for the whole tensor `t`, as Model::from_file fills it.
Weight whole_weight(const gguf::TensorInfo& t) {
  Weight w;
  w.type = t.type;
  w.shape = t.shape;
  w.row_bytes = *dtype_row_bytes(t.type, static_cast<uint64_t>(t.shape[0]));
  w.slice_bytes = w.row_bytes * static_cast<size_t>(t.shape.size() > 1 ? t.shape[1] : 1);
  w.n_bytes = t.n_bytes;
  return w;
}

bool on_disk(const gguf::File& file) {
  for (size_t i = 0; i < file.n_files(); ++i) {
    if (file.mapping(static_cast<uint32_t>(i)) == nullptr) return false;
  }
  return true;
}

}  // namespace

Result<ShardPlan> plan_for_file(const gguf::File& file, int n_ranks, int rank, MoeSplitMode moe) {
  ARC_ASSIGN_OR_RETURN(ModelConfig cfg, config_from_gguf(file));
  return make_shard_plan(
      cfg,
      [&file](const TensorRef& ref) {
        const gguf::TensorInfo* t = file.find_tensor(ref.name);
        return t != nullptr ? t->type : DType::F32;
      },
      n_ranks, rank, moe);
}

std::vector<std::string> describe_split(const gguf::File& file, int n_ranks, MoeSplitMode moe) {
  Result<ShardPlan> first = plan_for_file(file, n_ranks, 0, moe);
  if (!first.ok()) return {std::string(first.status().message())};
  std::vector<std::string> lines = first->describe();
  uint64_t most = 0;
  for (int r = 0; r < n_ranks; ++r) {
    Result<ShardPlan> p = plan_for_file(file, n_ranks, r, moe);
    if (p.ok()) most = std::max(most, shard_weight_bytes(file, *p));
  }
  lines.push_back("largest rank holds " + std::to_string(most >> 20) + " MiB of weights");
  return lines;
}

uint64_t shard_weight_bytes(const gguf::File& file, const ShardPlan& plan) {
  uint64_t bytes = 0;
  for_each_tensor(plan.full, [&](const TensorRef& ref) {
    const gguf::TensorInfo* t = file.find_tensor(ref.name);
    if (t == nullptr || !dtype_row_bytes(t->type, static_cast<uint64_t>(t->shape[0]))) return;
    Weight w = whole_weight(*t);
    part_of(plan, ref, w);
    bytes += w.n_bytes;
  });
  if (plan.n_ranks > 1 && plan.full.tied_embeddings) {
    if (const gguf::TensorInfo* t = file.find_tensor("token_embd.weight")) {
      bytes += whole_weight(*t).row_bytes * static_cast<uint64_t>(plan.vocab_count());
    }
  }
  return bytes;
}

Result<std::unique_ptr<Model>> load_model_shard(gguf::File file, Backend& backend,
                                                const ShardPlan& plan,
                                                const ModelLoadOptions& opt) {
  auto* streamer = dynamic_cast<WeightStreamer*>(&backend);
  if (plan.n_ranks == 1 || streamer == nullptr || !on_disk(file)) {
    // Mapped in place (CPU), or the whole model (one rank): shard what was loaded.
    ARC_ASSIGN_OR_RETURN(auto model, Model::from_file(std::move(file), backend, opt));
    if (plan.n_ranks > 1) ARC_RETURN_IF_ERROR(shard_model(*model, backend, plan));
    return model;
  }
  // Streamed: where every tensor lies, taken before the file moves into the model.
  std::vector<std::string> paths(file.n_files());
  for (size_t i = 0; i < paths.size(); ++i) {
    paths[i] = file.mapping(static_cast<uint32_t>(i))->path();
  }
  std::unordered_map<std::string, FilePlace> where;
  for_each_tensor(plan.full, [&](const TensorRef& ref) {
    if (const gguf::TensorInfo* t = file.find_tensor(ref.name)) {
      where[ref.name] = {&paths[t->file_index], file.absolute_offset(*t),
                         file.tensor_data(*t).data()};
    }
  });
  const uint64_t total = shard_weight_bytes(file, plan);
  uint64_t before = 0;
  struct Gathered {
    int layer;
    TensorRole role;
    std::vector<uint8_t> bytes;
  };
  std::vector<Gathered> gathered;  // host bytes weights point into, until the model holds them
  ModelLoadOptions o;
  o.place = [&](const TensorRef& ref, const gguf::TensorInfo& info, Weight& w) -> Status {
    const FilePlace& at = where.at(ref.name);
    const Weight whole = whole_weight(info);
    const PartRead r = part_of(plan, ref, w);
    if (r.gathered) {
      // Heads padded with zeros or held twice (attention tensors only): gathered from the
      // mapping in host memory, then copied to the device.
      std::vector<uint8_t> host(static_cast<size_t>(w.n_bytes));
      gather_shard(at.mapped, whole, tensor_shard(plan, ref), host.data());
      ARC_ASSIGN_OR_RETURN(w.data, backend.map_weights(host));
      // A backend that uses host memory in place (the CPU) keeps pointing into it: the model
      // takes the buffer once it exists.
      if (w.data == host.data()) gathered.push_back({ref.layer, ref.spec->role, std::move(host)});
      before += w.n_bytes;
      return ok_status();
    }
    LoadProgressFn each;
    if (opt.progress) {
      each = [&](uint64_t done, uint64_t) { return opt.progress(before + done, total); };
    }
    ARC_ASSIGN_OR_RETURN(w.data, streamer->stream_file_rows(*at.path, at.offset, r.n_rows, r.stride,
                                                            r.take_offset, r.take_bytes, each));
    before += w.n_bytes;
    return ok_status();
  };
  ARC_ASSIGN_OR_RETURN(auto model, Model::from_file(std::move(file), backend, o));
  for (const Gathered& g : gathered) {
    Weight& w = model->mutable_weight(g.layer, g.role);
    uint8_t* kept = model->keep_bytes(g.bytes.size());
    std::memcpy(kept, g.bytes.data(), g.bytes.size());  // as arranged by the backend
    w.data = kept;
  }
  // Every tensor is already this rank's part; weight_bytes() counts them.
  finish_shard(*model, plan, model->weight_bytes());
  return model;
}

}  // namespace arc
