#include "scheduler/yaml_loader.hpp"

#include <gtest/gtest.h>

namespace rstorm::scheduler {
namespace {

std::string cluster_error(const std::string& text) {
  Result<Cluster> r = parse_cluster(text, "c.yaml");
  return r.ok() ? "ok" : r.error().message;
}

std::string topology_error(const std::string& text) {
  Result<TopologyRequest> r = parse_topology(text, "t.yaml");
  return r.ok() ? "ok" : r.error().message;
}

TEST(YamlLoaderTest, ReadsNodesDefaultsSlotsAndResources) {
  Result<Cluster> r = parse_cluster(R"(defaults: {memory_mb: 2048, cpu: 200, slots: 2}
racks:
  - name: r1
    nodes:
      - {id: a, host: ha, slots: [7000, 7001, 7002], resources: {gpu.count: 2}}
      - {id: b, memory_mb: 1024}
  - name: r2
    nodes: 3
)",
                                    "c.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Cluster& c = r.value();
  ASSERT_EQ(c.nodes.size(), 5u);
  EXPECT_EQ(c.nodes[0].host, "ha");
  EXPECT_EQ(c.nodes[0].ports, (std::vector<int>{7000, 7001, 7002}));
  EXPECT_EQ(c.nodes[0].generic.at("gpu.count"), 2);
  EXPECT_EQ(c.nodes[0].memory_mb, 2048);
  EXPECT_EQ(c.nodes[1].memory_mb, 1024);
  EXPECT_EQ(c.nodes[1].ports, (std::vector<int>{6700, 6701}));
  EXPECT_EQ(c.nodes[4].id.value(), "r2-n3");
  EXPECT_EQ(c.nodes[4].rack.value(), "r2");
  EXPECT_EQ(c.nodes[4].cpu, 200);
}

TEST(YamlLoaderTest, WrongTypeNamesFileLineAndField) {
  EXPECT_EQ(
      cluster_error("racks:\n  - name: r1\n    nodes:\n      - id: a\n        memory_mb: lots\n"),
      "c.yaml:5: field 'racks[0].nodes[0].memory_mb': expected a number, got 'lots'");
}

TEST(YamlLoaderTest, MissingFieldNamesTheLineOfItsParent) {
  EXPECT_EQ(cluster_error("racks:\n  - name: r1\n    nodes:\n      - host: h\n"),
            "c.yaml:4: field 'racks[0].nodes[0].id': missing");
}

TEST(YamlLoaderTest, UnknownFieldIsAnError) {
  EXPECT_EQ(cluster_error("racks:\n  - name: r1\n    nodes:\n      - {id: a, memroy_mb: 3}\n"),
            "c.yaml:4: field 'racks[0].nodes[0].memroy_mb': unknown field (known: id, host, "
            "memory_mb, cpu, slots, resources)");
}

TEST(YamlLoaderTest, DuplicateNodeIdNamesTheSecond) {
  EXPECT_EQ(cluster_error("racks:\n  - name: r1\n    nodes: [{id: a}]\n  - name: r2\n    "
                          "nodes:\n      - {id: a}\n"),
            "c.yaml:6: field 'racks[1].nodes[0].id': node 'a' is listed twice");
}

TEST(YamlLoaderTest, MalformedYamlNamesTheLine) {
  EXPECT_EQ(cluster_error("racks:\n  - name: [r1\n"), "c.yaml:3: end of sequence flow not found");
}

TEST(YamlLoaderTest, MissingFileNamesThePath) {
  Result<Cluster> r = load_cluster_file("/nonexistent/cluster.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "/nonexistent/cluster.yaml: cannot read the file");
}

TEST(YamlLoaderTest, ReadsComponentsEdgesAndConfig) {
  Result<TopologyRequest> r = parse_topology(R"(name: wc
config:
  topology.workers: 3
  topology.worker.max.heap.size.mb: 1024
  topology.priority: 2
  topology.acker.executors: 1
  topology.scheduler.strategy: round-robin
  topology.message.timeout.secs: 30
components:
  - {name: words, type: spout, parallelism: 2, tasks: 4, cpu: 30}
  - {name: count, parallelism: 3, onheap_mb: 256, offheap_mb: 64, inputs: [words],
     resources: {gpu.count: 1}}
)",
                                             "t.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const TopologyRequest& t = r.value();
  EXPECT_EQ(t.id.value(), "wc");
  EXPECT_EQ(t.workers, 3);
  EXPECT_EQ(t.worker_max_heap_mb, 1024);
  EXPECT_EQ(t.priority, 2);
  EXPECT_EQ(t.acker_executors, 1);
  EXPECT_EQ(t.strategy, Strategy::kRoundRobin);
  ASSERT_EQ(t.executors.size(), 5u);
  EXPECT_EQ(t.executors[0].first_task, 1);
  EXPECT_EQ(t.executors[0].last_task, 2);
  EXPECT_EQ(t.executors[1].first_task, 3);
  EXPECT_EQ(t.executors[2].component, "count");
  EXPECT_EQ(t.executors[2].first_task, 5);
  EXPECT_EQ(t.executors[2].memory_mb(), 320);
  EXPECT_EQ(t.executors[2].generic.at("gpu.count"), 1);
  ASSERT_EQ(t.edges.size(), 1u);
  EXPECT_EQ(t.edges[0].from, "words");
  EXPECT_EQ(t.edges[0].to, "count");
}

TEST(YamlLoaderTest, ReadsThePlacementSearchKeys) {
  Result<TopologyRequest> r = parse_topology(R"(name: t
config:
  topology.scheduler.improve.max.evaluations: 0
  topology.scheduler.exact.max.executors: 12
components: [{name: s, type: spout}]
)",
                                             "t.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().improve_max_evaluations, 0u);
  EXPECT_EQ(r.value().exact_max_executors, 12);
  EXPECT_EQ(topology_error("name: t\nconfig:\n  topology.scheduler.exact.max.executors: -1\n"
                           "components: [{name: s, type: spout}]\n"),
            "t.yaml:3: field 'config.topology.scheduler.exact.max.executors': must be at least 0");
}

TEST(YamlLoaderTest, UnknownInputComponentNamesLineAndField) {
  EXPECT_EQ(topology_error("name: t\ncomponents:\n  - {name: s, type: spout}\n  - name: b\n"
                           "    inputs: [s, nope]\n"),
            "t.yaml:5: field 'components[1].inputs[1]': no component 'nope'");
}

TEST(YamlLoaderTest, NegativeParallelismIsRefused) {
  EXPECT_EQ(topology_error("name: t\ncomponents:\n  - name: s\n    type: spout\n    "
                           "parallelism: -2\n"),
            "t.yaml:5: field 'components[0].parallelism': must be at least 1");
}

TEST(YamlLoaderTest, UnknownStrategyIsRefused) {
  EXPECT_EQ(topology_error("name: t\nconfig:\n  topology.scheduler.strategy: fastest\n"
                           "components: [{name: s, type: spout}]\n"),
            "t.yaml:3: field 'config.topology.scheduler.strategy': unknown strategy 'fastest' "
            "(resource-aware, round-robin)");
}

TEST(YamlLoaderTest, NonTopologyConfigKeyIsRefused) {
  EXPECT_EQ(topology_error("name: t\nconfig:\n  nimbus.seeds: [a]\n"
                           "components: [{name: s, type: spout}]\n"),
            "t.yaml:3: field 'config.nimbus.seeds': unknown config key (topology config keys "
            "start with 'topology.')");
}

TEST(YamlLoaderTest, DuplicateComponentIsRefused) {
  EXPECT_EQ(topology_error("name: t\ncomponents:\n  - {name: s, type: spout}\n  - {name: s}\n"),
            "t.yaml:4: field 'components[1].name': component 's' declared twice");
}

TEST(YamlLoaderTest, FewerTasksThanParallelismIsRefused) {
  EXPECT_EQ(topology_error("name: t\ncomponents:\n  - {name: s, type: spout, parallelism: 4, "
                           "tasks: 2}\n"),
            "t.yaml:3: field 'components[0].tasks': fewer tasks than parallelism (4)");
}

TEST(YamlLoaderTest, TopologyWithoutSpoutIsRefused) {
  EXPECT_EQ(topology_error("name: t\ncomponents:\n  - {name: b}\n"),
            "t.yaml:3: field 'components': no component has type 'spout'");
}

}  // namespace
}  // namespace rstorm::scheduler
