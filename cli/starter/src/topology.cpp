// __NAME__'s topology, exported for `rstorm local` and `rstorm submit`.
#include "components.hpp"

RSTORM_TOPOLOGY(__NAME__) { return __NAME__::build_topology(); }
