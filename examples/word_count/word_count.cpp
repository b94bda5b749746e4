// The word count topology, exported for `rstorm local` and `rstorm submit`.
#include "word_count.hpp"

RSTORM_TOPOLOGY(word_count) { return rstorm::examples::build_word_count(); }
