// Structural checks of a TopologySpec (internal to the API library).
#pragma once

#include <string>
#include <vector>

#include "rstorm/topology.hpp"

namespace rstorm {

// Appends one message per problem to `problems`, in component-id order.
void validate_topology(const TopologySpec& spec, std::vector<std::string>& problems);

}  // namespace rstorm
