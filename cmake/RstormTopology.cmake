# rstorm_add_topology(<name> SOURCES ...)
#
# Builds a user topology into a shared library (lib<name>.so) that `rstorm local`,
# `rstorm submit` and the worker load. The sources must contain exactly one
# RSTORM_TOPOLOGY(...) block. The library links the rstorm API shared library; the
# runtime that loads it provides the same one.
function(rstorm_add_topology name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} SHARED ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE rstorm::api ${ARG_DEPS})
  set_target_properties(${name} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(TARGET rstorm_api)
    target_compile_options(${name} PRIVATE ${RSTORM_WARNINGS})
  endif()
endfunction()
