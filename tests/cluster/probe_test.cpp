// probe_node on fake procfs/sysfs trees: a DGX Spark-like box (tests/data/cluster/spark), one
// full of odd values (odd), and no tree at all. Expected values are read off the fixture files.
#include <gtest/gtest.h>

#include <algorithm>

#include "arc/cluster_probe.h"

namespace arc::cluster {
namespace {

const std::string kData = std::string(ARC_TEST_DATA_DIR) + "/cluster/";

NodeProbe probe(const std::string& tree) {
  ProbeOptions o;
  o.root = kData + tree;
  o.gpu = false;
  return probe_node(o);
}

std::vector<std::string> codes(const std::vector<Finding>& f) {
  std::vector<std::string> c;
  for (const auto& x : f) c.push_back(x.code);
  return c;
}

TEST(ClusterProbe, SparkCpuAndMemory) {
  const NodeProbe n = probe("spark");
  EXPECT_EQ(n.hostname, "spark-a");
  EXPECT_EQ(n.cpu_model, "2x Cortex-X925 + 2x Cortex-A725");
  EXPECT_EQ(n.cpu_cores, 4);
  const MemoryState& m = n.memory;
  EXPECT_EQ(m.total_bytes, uint64_t{127535184} * 1024);
  EXPECT_EQ(m.available_bytes, uint64_t{98765432} * 1024);
  EXPECT_EQ(m.page_cache_bytes, uint64_t{90123456 + 123456} * 1024);  // Cached + Buffers
  EXPECT_EQ(m.dirty_bytes, uint64_t{2097152} * 1024);
  EXPECT_EQ(m.swap_total_bytes, uint64_t{16777212} * 1024);
  EXPECT_EQ(m.swap_used_bytes(), uint64_t{16777212 - 16252924} * 1024);
  EXPECT_EQ(m.swappiness, 60);
  EXPECT_EQ(n.gpu_note, "not probed");
}

TEST(ClusterProbe, SparkRdmaPortsAndTheirInterfaces) {
  const NodeProbe n = probe("spark");
  ASSERT_EQ(n.rdma.size(), 4u);
  // Natural order of the names; every device has one Ethernet (RoCE) port.
  EXPECT_EQ(n.rdma[0].name, "rocep1s0f0");
  EXPECT_EQ(n.rdma[1].name, "rocep1s0f1");
  EXPECT_EQ(n.rdma[2].name, "roceP2p1s0f0");
  EXPECT_EQ(n.rdma[3].name, "roceP2p1s0f1");
  EXPECT_EQ(n.rdma[2].pci_address, "0002:01:00.0");
  EXPECT_EQ(n.rdma[0].board_id, "NVD0000000033");
  EXPECT_EQ(n.rdma[0].fw_ver, "28.45.1020");
  for (const auto& d : n.rdma) {
    ASSERT_EQ(d.ports.size(), 1u) << d.name;
    EXPECT_EQ(d.ports[0].number, 1);
    EXPECT_EQ(d.ports[0].link_layer, "Ethernet");
  }
  const RdmaPort& p0 = n.rdma[0].ports[0];
  EXPECT_EQ(p0.state, "ACTIVE");
  EXPECT_EQ(p0.state_code, 4);
  EXPECT_EQ(p0.phys_state, "LinkUp");
  EXPECT_EQ(p0.phys_state_code, 5);
  EXPECT_TRUE(p0.active());
  EXPECT_EQ(p0.rate, "200 Gb/sec (4X HDR)");
  EXPECT_EQ(p0.rate_gbps, 200.0);
  // From the RoCE GID table.
  ASSERT_TRUE(p0.netdev);
  EXPECT_EQ(p0.netdev->name, "enp1s0f0np0");
  EXPECT_EQ(p0.netdev->mtu, 1500);
  EXPECT_EQ(p0.netdev->operstate, "up");
  EXPECT_EQ(p0.netdev->speed_mbps, 200000);
  // From the PCI function's only interface; its speed reads -1 while down: absent.
  const RdmaPort& p1 = n.rdma[1].ports[0];
  EXPECT_EQ(p1.state, "DOWN");
  EXPECT_EQ(p1.phys_state, "Disabled");
  ASSERT_TRUE(p1.netdev);
  EXPECT_EQ(p1.netdev->name, "enp1s0f1np1");
  EXPECT_EQ(p1.netdev->operstate, "down");
  EXPECT_FALSE(p1.netdev->speed_mbps);
  EXPECT_FALSE(n.rdma[2].ports[0].active());
  EXPECT_TRUE(n.rdma[2].ports[0].link_up());
  // Two interfaces on the function: the one whose dev_port is port 1's (0).
  ASSERT_TRUE(n.rdma[3].ports[0].netdev);
  EXPECT_EQ(n.rdma[3].ports[0].netdev->name, "enP2p1s0f1np1");
}

TEST(ClusterProbe, SparkFindingsFollowTheSeedsChecklist) {
  const auto f = diagnose(probe("spark"));
  EXPECT_EQ(codes(f), (std::vector<std::string>{"mtu_small", "port_no_link", "port_not_active",
                                                "port_no_link", "one_pcie_function", "swap_used",
                                                "page_cache_large", "dirty_large"}));
  EXPECT_EQ(f[0].subject, "enp1s0f0np0");
  EXPECT_NE(f[0].message.find("MTU 1500"), std::string::npos);
  EXPECT_EQ(f[2].subject, "roceP2p1s0f0 port 1");
  EXPECT_EQ(f[2].severity, Severity::kWarning);
  EXPECT_NE(f[2].message.find("INIT"), std::string::npos);
  EXPECT_NE(f[5].message.find("0.5 GiB"), std::string::npos);  // 524288 kB of swap in use
}

TEST(ClusterProbe, OddValuesLeaveFieldsAbsent) {
  const NodeProbe n = probe("odd");
  EXPECT_EQ(n.hostname, "");  // no file, and a fake root does not fall back to gethostname
  EXPECT_EQ(n.cpu_model, "AMD EPYC 7B13 64-Core Processor");
  EXPECT_EQ(n.cpu_cores, 2);
  const MemoryState& m = n.memory;
  EXPECT_FALSE(m.total_bytes);       // "banana"
  EXPECT_FALSE(m.available_bytes);   // negative
  EXPECT_FALSE(m.page_cache_bytes);  // Cached overflows int64
  EXPECT_FALSE(m.dirty_bytes);       // empty
  EXPECT_EQ(m.swap_total_bytes, uint64_t{1024} * 1024);
  EXPECT_FALSE(m.swap_used_bytes());  // SwapFree > SwapTotal
  EXPECT_FALSE(m.swappiness);         // "lots"
  ASSERT_EQ(n.rdma.size(), 2u);
  EXPECT_EQ(n.rdma[0].name, "mlx5_9");
  EXPECT_TRUE(n.rdma[1].ports.empty());  // mlx5_10 has no ports folder
  // Ports "abc" and "01" are not port numbers.
  ASSERT_EQ(n.rdma[0].ports.size(), 2u);
  const RdmaPort& p2 = n.rdma[0].ports[0];
  EXPECT_EQ(p2.number, 2);
  EXPECT_EQ(p2.state, "ACTIVE");  // no "N:" code: not counted as active
  EXPECT_FALSE(p2.state_code);
  EXPECT_FALSE(p2.active());
  EXPECT_FALSE(p2.phys_state_code);  // 999999999999
  EXPECT_EQ(p2.phys_state, "Weird");
  EXPECT_EQ(p2.rate, "fast");
  EXPECT_FALSE(p2.rate_gbps);
  EXPECT_FALSE(p2.netdev);  // "../../../etc" is not an interface name
  const RdmaPort& p3 = n.rdma[0].ports[1];
  ASSERT_TRUE(p3.netdev);
  EXPECT_EQ(p3.netdev->name, "eth7");
  EXPECT_FALSE(p3.netdev->mtu);  // "abc"
  EXPECT_EQ(p3.netdev->operstate, "");
  EXPECT_EQ(codes(diagnose(n)), std::vector<std::string>{"swap_on"});
}

TEST(ClusterProbe, MissingTreeGivesAnEmptyProbe) {
  const NodeProbe n = probe("no-such-tree");
  EXPECT_EQ(n.hostname, "");
  EXPECT_FALSE(n.cpu_cores);
  EXPECT_FALSE(n.memory.total_bytes);
  EXPECT_TRUE(n.rdma.empty());
  EXPECT_EQ(codes(diagnose(n)), std::vector<std::string>{"rdma_none"});
  const auto j = to_json(n);
  EXPECT_TRUE(j["memory"].empty());
  EXPECT_TRUE(j["rdma"].empty());
}

TEST(ClusterProbe, JsonLeavesAbsentFieldsOut) {
  const auto j = to_json(probe("spark"));
  EXPECT_EQ(j["hostname"], "spark-a");
  EXPECT_EQ(j["cpu"]["cores"], 4);
  EXPECT_EQ(j["memory"]["swap_used_bytes"], int64_t{524288} * 1024);
  EXPECT_EQ(j["gpus"].size(), 0u);
  EXPECT_EQ(j["gpu_note"], "not probed");
  ASSERT_EQ(j["rdma"].size(), 4u);
  const auto& p = j["rdma"][1]["ports"][0];
  EXPECT_EQ(p["state"], "DOWN");
  EXPECT_EQ(p["active"], false);
  EXPECT_EQ(p["netdev"]["mtu"], 9000);
  EXPECT_FALSE(p["netdev"].contains("speed_mbps"));
  EXPECT_EQ(j["findings"].size(), 8u);
  EXPECT_EQ(j["findings"][2]["severity"], "warning");
  const auto odd = to_json(probe("odd"));
  EXPECT_FALSE(odd["memory"].contains("total_bytes"));
  EXPECT_FALSE(odd["rdma"][0]["ports"][0].contains("rate_gbps"));
}

TEST(ClusterProbe, TextReportNamesPortsAndFindings) {
  const std::string t = format_text(probe("spark"));
  EXPECT_NE(t.find("host        spark-a"), std::string::npos) << t;
  EXPECT_NE(t.find("ACTIVE, LinkUp, 200 Gb/sec (4X HDR), Ethernet, enp1s0f0np0 mtu 1500 up"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("warning: roceP2p1s0f0 port 1: link up but the RDMA port is INIT"),
            std::string::npos)
      << t;
}

TEST(ClusterProbe, ThisMachineDoesNotCrash) {
  ProbeOptions o;
  o.gpu = false;
  const NodeProbe n = probe_node(o);
  EXPECT_FALSE(n.hostname.empty());  // /proc, or gethostname
  EXPECT_TRUE(n.memory.total_bytes);
}

}  // namespace
}  // namespace arc::cluster
