// A shared library that links the API but exports no topology.
#include <rstorm/rstorm.hpp>

extern "C" int rstorm_test_unrelated_function() { return 42; }
