// Link test options and the collectives on one rank (LocalCommunicator); two ranks run in the
// mpi test of serve --tp 2 (tests/dist/tp_serve_test.cpp).
#include <gtest/gtest.h>

#include "arc/cluster_link.h"
#include "arc/tp_control.h"

namespace arc::cluster {
namespace {

using nlohmann::json;

TEST(LinkTest, OptionsDefaultsAndValidation) {
  auto d = link_test_options_from_json(json::object());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->sizes_bytes, (std::vector<int64_t>{16384, 1 << 20, 16 << 20, 64 << 20}));
  EXPECT_EQ(d->iterations, 0);
  auto o = link_test_options_from_json({{"sizes", {4, 1001}}, {"iterations", 7}});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->sizes_bytes, (std::vector<int64_t>{4, 1000}));  // whole floats
  EXPECT_EQ(o->iterations, 7);
  for (const json& bad : {json::array(), json({{"sizes", json::array()}}), json({{"sizes", {1}}}),
                          json({{"sizes", {int64_t{1} << 40}}}), json({{"sizes", {"1MB"}}}),
                          json({{"sizes", {1, 2, 3, 4, 5, 6, 7, 8, 9}}}), json({{"iterations", 0}}),
                          json({{"iterations", 5000}}), json({{"iterations", 1.5}})}) {
    auto r = link_test_options_from_json(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
  // The options survive the trip to the workers, defaults included.
  auto d_back = link_test_options_from_json(to_json(*d));
  ASSERT_TRUE(d_back.ok()) << d_back.status().to_string();
  EXPECT_EQ(d_back->sizes_bytes, d->sizes_bytes);
  EXPECT_EQ(d_back->iterations, 0);
  auto back = link_test_options_from_json(to_json(*o));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->sizes_bytes, o->sizes_bytes);
  EXPECT_EQ(back->iterations, 7);
}

TEST(LinkTest, OneRankSumsToItselfAndTimesEachSize) {
  LocalCommunicator comm;
  LinkTestOptions o;
  o.sizes_bytes = {4, 12, 4096};
  o.iterations = 5;
  auto r = tp_link_test(comm, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*r)[i].bytes, o.sizes_bytes[i]);
    EXPECT_EQ((*r)[i].iterations, 5);
    EXPECT_TRUE((*r)[i].correct);
    EXPECT_GE((*r)[i].seconds, 0.0);
    EXPECT_EQ((*r)[i].busbw_gbs, 0.0);  // 2 (n - 1) / n with n = 1
  }
  // Iterations from the size when not given: more for small sizes, at least 3.
  o.iterations = 0;
  o.sizes_bytes = {4, 64 << 20};
  r = run_link_test(comm, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].iterations, 200);
  EXPECT_EQ((*r)[1].iterations, 8);
  const json j = to_json(*r);
  EXPECT_EQ(j[1]["bytes"], 64 << 20);
  EXPECT_EQ(j[1]["correct"], true);
}

TEST(LinkTest, GatherOnOneRankIsItsOwnJson) {
  LocalCommunicator comm;
  auto g = tp_gather_probes(comm, {{"hostname", "box"}, {"x", 1}});
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->size(), 1u);
  EXPECT_EQ((*g)[0]["hostname"], "box");
}

}  // namespace
}  // namespace arc::cluster
