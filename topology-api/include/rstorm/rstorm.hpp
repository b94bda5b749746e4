// Everything a topology author needs: #include <rstorm/rstorm.hpp>.
#pragma once

#include "rstorm/bolt.hpp"
#include "rstorm/collectors.hpp"
#include "rstorm/config.hpp"
#include "rstorm/config_schema.hpp"
#include "rstorm/fields.hpp"
#include "rstorm/ids.hpp"
#include "rstorm/metrics.hpp"
#include "rstorm/output_fields_declarer.hpp"
#include "rstorm/spout.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/topology_builder.hpp"
#include "rstorm/topology_context.hpp"
#include "rstorm/topology_library.hpp"
#include "rstorm/tuple.hpp"
#include "rstorm/value.hpp"
