// Word count with its counts in keyed state, exported for `rstorm local` and
// `rstorm submit`.
#include "word_count.hpp"

RSTORM_TOPOLOGY(stateful_word_count) { return rstorm::examples::build_stateful_word_count(); }
