// Top words per sliding event-time window, exported for `rstorm local` and
// `rstorm submit`.
#include "top_words.hpp"

RSTORM_TOPOLOGY(top_words) { return rstorm::examples::build_top_words(config); }
