// Scheduler scale: the resource-aware scheduler on 1,000 executors / 100
// nodes, 10,000 / 1,000 and 100,000 / 10,000 (racks of 40), median of several
// runs, peak resident memory and the growth exponent; then the network cost of
// both schedulers on the paper's topologies over the paper's cluster.
//
//   rstorm-bench-scheduler [--runs N] [--max-executors N] [--scenario identical|mixed|saturated]
//
// --scenario runs that scenario's sizes alone (for a profile), without the
// index comparison and the network costs.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "scheduler/cluster_state.hpp"
#include "scheduler/resource_aware_scheduler.hpp"
#include "scheduler/scheduler.hpp"
#include "scheduler/yaml_loader.hpp"

namespace rs = rstorm::scheduler;

namespace {

// Identical nodes, or (mixed) nodes of three sizes of which about a third
// already run another topology's worker, so free capacities are all different.
rs::Cluster make_cluster(int nodes, int per_rack, bool mixed) {
  rs::Cluster cluster;
  cluster.nodes.reserve(nodes);
  std::mt19937_64 rng(42);
  for (int i = 0; i < nodes; ++i) {
    rs::NodeSpec node;
    node.id = rs::NodeId("node-" + std::to_string(i + 1));
    node.rack = rs::RackId("rack-" + std::to_string(i / per_rack + 1));
    node.ports = {6700, 6701, 6702, 6703};
    if (mixed) {
      node.memory_mb = 2048.0 * (1 + rng() % 3);
      node.cpu = 200.0 * (1 + rng() % 3);
      if (rng() % 3 == 0) {
        cluster.used.push_back(rs::SlotUsage{rs::WorkerSlot{node.id, 6703},
                                             rs::TopologyId("other"),
                                             static_cast<double>(64 * (1 + rng() % 16)),
                                             static_cast<double>(5 * (1 + rng() % 20)),
                                             {}});
      }
    }
    cluster.nodes.push_back(std::move(node));
  }
  return cluster;
}

// Ten components: a spout, then two branches that join, with mixed memory and
// CPU requests so nodes fill unevenly.
rs::TopologyRequest make_topology(int executors, double cpu_scale) {
  rs::TopologyRequest t;
  t.id = rs::TopologyId("scale");
  const int per = executors / 10;
  const double onheap[10] = {128, 256, 128, 192, 128, 256, 64, 128, 192, 128};
  const double cpu[10] = {20, 10, 30, 15, 25, 10, 5, 20, 15, 10};
  for (int c = 0; c < 10; ++c) {
    rs::ComponentSpec spec;
    spec.name = "c" + std::to_string(c);
    spec.is_spout = c == 0;
    spec.parallelism = per;
    spec.onheap_mb = onheap[c];
    spec.offheap_mb = c % 3 == 0 ? 64 : 0;
    spec.cpu = cpu[c] * cpu_scale;
    rs::add_component(t, spec);
  }
  const int edges[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {1, 5},
                          {5, 6}, {6, 7}, {4, 8}, {7, 8}, {8, 9}};
  for (const auto& e : edges) {
    t.edges.push_back(rs::Edge{"c" + std::to_string(e[0]), "c" + std::to_string(e[1])});
  }
  return t;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // KiB on Linux
}

struct Point {
  int executors;
  int nodes;
  double median_s;
  double rss_mb;
};

enum class Scenario { kIdentical, kMixed, kCpuSaturated };

const char* scenario_name(Scenario s) {
  switch (s) {
    case Scenario::kIdentical:
      return "identical";
    case Scenario::kMixed:
      return "mixed    ";
    default:
      return "saturated";
  }
}

Point measure(int executors, int nodes, int runs, Scenario scenario) {
  const rs::Cluster cluster = make_cluster(nodes, 40, scenario == Scenario::kMixed);
  // Saturated: executors ask about 1.5 times the CPU the cluster has (16
  // points on average, times 3.75, ten per node of 400), so the last third
  // are placed in the overcommit pass.
  const rs::TopologyRequest topology =
      make_topology(executors, scenario == Scenario::kCpuSaturated ? 3.75 : 1.0);
  std::vector<double> times;
  std::size_t nodes_used = 0;
  std::uint64_t cross = 0, pairs = 0;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    rs::Result<rs::ScheduleResult> result = rs::schedule(cluster, {topology});
    const auto stop = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(stop - start).count());
    if (!result.ok() || !result.value().topologies[0].scheduled) {
      std::fprintf(stderr, "not scheduled: %s\n",
                   result.ok() ? result.value().topologies[0].reason.c_str()
                               : result.error().message.c_str());
      std::exit(1);
    }
    nodes_used = 0;
    for (const rs::NodeUsage& n : result.value().nodes) nodes_used += n.slots_used > 0 ? 1 : 0;
    cross = result.value().topologies[0].network.cross_rack;
    pairs = result.value().topologies[0].network.pairs();
  }
  std::sort(times.begin(), times.end());
  const Point p{executors, nodes, times[times.size() / 2], peak_rss_mb()};
  std::printf(
      "%s %9d executors %7d nodes: median %8.3f s (min %.3f, max %.3f, %d runs), "
      "peak RSS %7.1f MB, %zu nodes used, %llu of %llu pairs cross rack\n",
      scenario_name(scenario), executors, nodes, p.median_s, times.front(), times.back(), runs,
      p.rss_mb, nodes_used, static_cast<unsigned long long>(cross),
      static_cast<unsigned long long>(pairs));
  std::fflush(stdout);
  return p;
}

// The same placement found by the index and by evaluating every node for every
// executor (the definition), to show what the index saves.
void index_against_exhaustive(int executors, int nodes) {
  const rs::Cluster cluster = make_cluster(nodes, 40, true);
  const rs::TopologyRequest topology = make_topology(executors, 1.0);
  rs::Result<rs::ClusterState> base = rs::ClusterState::Create(cluster);
  double seconds[2];
  std::vector<rs::WorkerSlot> slots[2];
  for (int m = 0; m < 2; ++m) {
    rs::ClusterState state = base.value();
    const auto start = std::chrono::steady_clock::now();
    const rs::TopologyPlacement p = rs::schedule_resource_aware(
        state, topology, m == 0 ? rs::SearchMode::kIndexed : rs::SearchMode::kExhaustive);
    seconds[m] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    slots[m] = p.executor_slots;
  }
  std::printf("mixed %d executors on %d nodes: indexed search %.3f s, exhaustive scan %.3f s "
              "(%.0fx), same placement: %s\n",
              executors, nodes, seconds[0], seconds[1], seconds[1] / seconds[0],
              slots[0] == slots[1] ? "yes" : "NO");
}

void paper_costs() {
  const std::string source = RSTORM_SOURCE_DIR;
  rs::Result<rs::Cluster> cluster =
      rs::load_cluster_file(source + "/conf/clusters/rstorm-paper.yaml");
  if (!cluster.ok()) {
    std::fprintf(stderr, "%s\n", cluster.error().message.c_str());
    std::exit(1);
  }
  std::printf(
      "\nnetwork cost on the paper cluster (12 nodes, 2 racks): pairs same worker / "
      "same node / same rack / cross rack, weighted 0/1/2/3\n");
  std::printf("%-20s %-30s %-30s %s\n", "topology", "resource-aware", "round-robin",
              "weighted RA/RR");
  for (const char* name : {"linear", "diamond", "star", "page-load", "processing"}) {
    for (const char* variant : {"network", "cpu"}) {
      const std::string file = source + "/examples/paper/" + name + "-" + variant + ".yaml";
      rs::Result<rs::TopologyRequest> t = rs::load_topology_file(file);
      if (!t.ok()) {
        std::fprintf(stderr, "%s\n", t.error().message.c_str());
        std::exit(1);
      }
      std::string cells[2];
      std::uint64_t weighted[2] = {0, 0};
      for (int s = 0; s < 2; ++s) {
        rs::TopologyRequest request = t.value();
        request.strategy = s == 0 ? rs::Strategy::kResourceAware : rs::Strategy::kRoundRobin;
        const auto result = rs::schedule(cluster.value(), {request});
        const rs::NetworkCost& c = result.value().topologies[0].network;
        char buf[96];
        std::snprintf(buf, sizeof buf, "%llu/%llu/%llu/%llu w=%llu",
                      static_cast<unsigned long long>(c.same_worker),
                      static_cast<unsigned long long>(c.same_node),
                      static_cast<unsigned long long>(c.same_rack),
                      static_cast<unsigned long long>(c.cross_rack),
                      static_cast<unsigned long long>(c.weighted()));
        cells[s] = buf;
        weighted[s] = c.weighted();
      }
      std::printf("%-20s %-30s %-30s %.2f\n", t.value().id.value().c_str(), cells[0].c_str(),
                  cells[1].c_str(), static_cast<double>(weighted[0]) / weighted[1]);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  int max_executors = 100000;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--runs") runs = std::atoi(argv[i + 1]);
    if (flag == "--max-executors") max_executors = std::atoi(argv[i + 1]);
    if (flag == "--scenario") only = argv[i + 1];
  }
  std::printf(
      "resource-aware scheduling time against size (racks of 40 nodes, 4 slots each;\n"
      "identical: 4096 MB and 400 CPU points per node; mixed: 2/4/6 GB, 200/400/600\n"
      "points, a third of the nodes partly used by another topology; saturated:\n"
      "identical nodes, executors ask 1.5 times the cluster's CPU)\n");
  for (Scenario scenario : {Scenario::kIdentical, Scenario::kMixed, Scenario::kCpuSaturated}) {
    std::string name = scenario_name(scenario);
    name.erase(name.find_last_not_of(' ') + 1);
    if (!only.empty() && only != name) continue;
    std::vector<Point> points;
    for (int executors = 1000; executors <= max_executors; executors *= 10) {
      points.push_back(measure(executors, executors / 10, runs, scenario));
    }
    for (std::size_t i = 1; i < points.size(); ++i) {
      const double k = std::log(points[i].median_s / points[i - 1].median_s) /
                       std::log(static_cast<double>(points[i].executors) / points[i - 1].executors);
      std::printf("%s growth exponent %d -> %d executors: %.2f\n", scenario_name(scenario),
                  points[i - 1].executors, points[i].executors, k);
    }
  }
  if (!only.empty()) return 0;
  index_against_exhaustive(std::min(max_executors, 10000), std::min(max_executors, 10000) / 10);
  paper_costs();
  return 0;
}
