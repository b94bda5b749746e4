// Conversions between the three forms of a topology's structure: the API's
// rstorm::TopologySpec (what a library builds), the wire/storage form
// thrift::TopologyStructure (what the client submits and nimbus stores), and
// the scheduler's TopologyRequest. Plus the structural validation nimbus runs
// on every submission (the client has already run the API's, but nimbus does
// not trust its input). Free functions, thread-safe.
#pragma once

#include <map>
#include <string>

#include "common/status.hpp"
#include "rstorm/config.hpp"
#include "rstorm/topology.hpp"
#include "rstorm_thrift/rstorm_types.h"
#include "scheduler/request.hpp"

namespace rstorm::nimbus {

// The longest topology name nimbus takes (it is part of ids, blob keys and
// ZooKeeper paths).
inline constexpr std::size_t kMaxTopologyNameLength = 200;

// Why `name` cannot name a topology ("topology name 'a/b' is invalid: use
// letters, digits, '-', '_' and '.'", or its length past
// kMaxTopologyNameLength); empty when it can. The client checks before it
// uploads anything, nimbus again on every submission.
std::string topology_name_problem(const std::string& name);

thrift::TopologyStructure structure_to_thrift(const std::string& name, const TopologySpec& spec);

// Every structural problem, joined with "; ", naming the component, stream or
// field at fault: duplicate component ids, an input from an unknown component
// or stream, a fields grouping on a field the stream does not declare,
// parallelism < 1, negative resources. kInvalidArgument; OK when valid.
Status validate_structure(const thrift::TopologyStructure& structure);

// The scheduler's request for topology `topology_id`: executors with their
// task ranges (scheduler::add_component over the components in structure
// order), one edge per input, and the scheduling keys of `config`.
// kInvalidArgument naming the key when a scheduling key is wrong.
Result<scheduler::TopologyRequest> request_from_structure(
    const std::string& topology_id, const thrift::TopologyStructure& structure,
    const Config& config);

// Storm's `rebalance -r`: sets the resources per executor of the named
// components. A resource is onheap.memory.mb, offheap.memory.mb or
// cpu.pcore.percent (also under Storm's topology.component.resources.* /
// topology.component.cpu.pcore.percent names); any other name is a generic
// resource (e.g. gpu.count). kInvalidArgument naming the component and
// resource for an unknown component or an amount that is negative or not
// finite; `structure` is then unchanged.
Status apply_resource_overrides(
    thrift::TopologyStructure& structure,
    const std::map<std::string, std::map<std::string, double>>& overrides);

// Total executors and tasks of a structure.
int executor_count(const thrift::TopologyStructure& structure);
int task_count(const thrift::TopologyStructure& structure);

}  // namespace rstorm::nimbus
