// The files of resources/bench/ compiled into arc_bench (generated bench_resources.cpp).
#pragma once

#include <span>
#include <string_view>

namespace arc::bench::resources {

struct Resource {
  std::string_view name;  // file name without ".json"
  std::string_view text;  // the file's bytes
};

std::span<const Resource> bench_resources();

}  // namespace arc::bench::resources
