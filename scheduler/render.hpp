// Renders a ScheduleResult for people (text grouped by rack, node and worker,
// used against capacity, network cost) and for programs (JSON). Stateless
// functions, thread-safe. Callers: `rstorm schedule`, later `rstorm describe`.
#pragma once

#include <string>
#include <vector>

#include "scheduler/placement.hpp"
#include "scheduler/request.hpp"

namespace rstorm::scheduler {

struct RenderOptions {
  // Text: also list every resource-aware decision with its distance terms.
  // (JSON always carries them.) Default: off.
  bool explain = false;
};

// REQUIRES: result.topologies[i] answers requests[i].
std::string render_text(const ScheduleResult& result, const std::vector<TopologyRequest>& requests,
                        const RenderOptions& options = {});
std::string render_json(const ScheduleResult& result, const std::vector<TopologyRequest>& requests);

// "split[3]" or "split[3-4]": component and task range of one executor.
std::string executor_label(const ExecutorRequest& e);

// The placement's quality in one line, as `rstorm schedule` and nimbus's log print it:
// "greedy cost 74, final cost 58 (from: first-fit decreasing, 12 moves in 3110 evaluations), optimum 58".
std::string quality_text(const PlacementQuality& q);

}  // namespace rstorm::scheduler
