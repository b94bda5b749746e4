// Topology: what TopologyBuilder::build() returns. Two parts:
//  - TopologySpec, a plain value with the structure (components, their kind,
//    parallelism, tasks, resources, streams, inputs with groupings, config):
//    what the scheduler, the CLI and nimbus read and may serialize;
//  - the factories that make spout and bolt instances, which only a process
//    that runs tasks needs.
// A Topology is immutable after build: thread-safe. Copies share factories.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rstorm/bolt.hpp"
#include "rstorm/config.hpp"
#include "rstorm/fields.hpp"
#include "rstorm/output_fields_declarer.hpp"
#include "rstorm/spout.hpp"
#include "rstorm/status.hpp"

namespace rstorm {

enum class GroupingType { kShuffle, kFields, kAll, kGlobal, kDirect, kLocalOrShuffle, kNone };

// "shuffle", "fields", "all", "global", "direct", "local-or-shuffle", "none".
std::string_view grouping_name(GroupingType type);

// Whether the grouping gives the subscriber's tasks unequal shares whatever
// the load: global (every tuple to one task) and direct (the tasks the
// producer picks). A bolt fed so heads no fused chain.
inline bool spreads_unevenly(GroupingType type) {
  return type == GroupingType::kGlobal || type == GroupingType::kDirect;
}

struct Grouping {
  GroupingType type = GroupingType::kShuffle;
  Fields fields;  // kFields only
  friend bool operator==(const Grouping&, const Grouping&) = default;
};

// One subscription of a bolt: a stream of another component and how its tuples
// are spread over the bolt's tasks.
struct InputSpec {
  std::string component;
  std::string stream;
  Grouping grouping;
  friend bool operator==(const InputSpec&, const InputSpec&) = default;
};

// Per-executor resource request; defaults as in Storm.
struct ResourceRequest {
  double onheap_mb = 128;
  double offheap_mb = 0;
  double cpu_points = 10;                 // 100 = one core
  std::map<std::string, double> generic;  // e.g. {"gpu.count", 1}
  friend bool operator==(const ResourceRequest&, const ResourceRequest&) = default;
};

enum class ComponentKind { kSpout, kBolt };

struct ComponentSpec {
  std::string id;
  ComponentKind kind = ComponentKind::kBolt;
  int parallelism = 1;  // executors
  int num_tasks = 1;    // tasks, spread over the executors
  ResourceRequest resources;
  std::vector<StreamSpec> streams;  // declared output streams
  std::vector<InputSpec> inputs;    // empty for spouts
  Config config;                    // per-component entries, over the topology config

  const StreamSpec* find_stream(std::string_view stream) const;
};

struct TopologySpec {
  std::vector<ComponentSpec> components;  // sorted by id

  const ComponentSpec* find(std::string_view id) const;
};

using SpoutFactory = std::function<std::unique_ptr<Spout>()>;
using BoltFactory = std::function<std::unique_ptr<Bolt>()>;
using BasicBoltFactory = std::function<std::unique_ptr<BasicBolt>()>;

class Topology {
 public:
  Topology(TopologySpec spec, std::map<std::string, SpoutFactory, std::less<>> spouts,
           std::map<std::string, BoltFactory, std::less<>> bolts);

  const TopologySpec& spec() const { return spec_; }
  const std::vector<ComponentSpec>& components() const { return spec_.components; }
  // nullptr for an unknown id.
  const ComponentSpec* component(std::string_view id) const { return spec_.find(id); }

  // A new instance of a spout or bolt component; nullptr for an unknown id or a
  // component of the other kind. May throw whatever the user's factory throws.
  std::unique_ptr<Spout> create_spout(std::string_view id) const;
  std::unique_ptr<Bolt> create_bolt(std::string_view id) const;

  // Each component's memory and CPU per executor from its config's
  // topology.component.resources.onheap.memory.mb, ...offheap.memory.mb and
  // topology.component.cpu.pcore.percent (set_memory_load, set_cpu_load and
  // add_configuration set them there), else from `config`'s (the topology
  // config: a submit's -c, the defaults), else as declared. A value that is
  // not a number >= 0 is an error naming the key, where it was set and the
  // component. Run by LoadedTopology::build with the config it builds with.
  api::Status resolve_resources(const Config& config);

  // Keeps `owner` alive as long as any copy of this topology (the loader uses
  // it for the shared library the factories' code lives in).
  void keep_alive(std::shared_ptr<const void> owner) { owner_ = std::move(owner); }

 private:
  struct Factories {
    std::map<std::string, SpoutFactory, std::less<>> spouts;
    std::map<std::string, BoltFactory, std::less<>> bolts;
  };
  // Declared first so that it is released last, after the factories whose code
  // it keeps loaded.
  std::shared_ptr<const void> owner_;
  TopologySpec spec_;
  std::shared_ptr<const Factories> factories_;
};

}  // namespace rstorm
