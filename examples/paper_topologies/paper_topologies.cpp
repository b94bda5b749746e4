// The R-Storm paper's topologies, one library for all of them:
//   rstorm submit build/lib/libpaper_topologies.so --name lin -c paper.topology=linear -c paper.variant=network
// Keys: see paper_components.hpp (PaperSettings) and README.md.
#include "paper_components.hpp"

RSTORM_TOPOLOGY(paper_topologies) {
  return rstorm::examples::paper::build_paper_topology(
      rstorm::examples::paper::settings_from_config(config));
}
