# Helpers that give every rstorm target the same warnings and naming.

set(RSTORM_WARNINGS -Wall -Wextra -Wno-unused-parameter)
if(RSTORM_WERROR)
  list(APPEND RSTORM_WARNINGS -Werror)
endif()
if(RSTORM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 warns "may be used uninitialized" inside <regex> and <functional>
    # once ASan instruments them (GCC's manual: -fsanitize=address may cause
    # false positives of -Wmaybe-uninitialized); with -Werror the build stops.
    list(APPEND RSTORM_WARNINGS -Wno-maybe-uninitialized)
  endif()
endif()

if(RSTORM_TSAN)
  if(RSTORM_SANITIZE)
    message(FATAL_ERROR "RSTORM_TSAN and RSTORM_SANITIZE cannot be combined: "
                        "ThreadSanitizer and AddressSanitizer exclude each other")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 warns that TSan does not support std::atomic_thread_fence, which
    # Boost.Asio's headers use; with -Werror the build stops.
    list(APPEND RSTORM_WARNINGS -Wno-tsan)
  endif()
  # The suppressions of races TSan cannot see as synchronised (libraries not
  # built with it), in every binary: no TSAN_OPTIONS to remember.
  add_library(rstorm_tsan_suppressions OBJECT ${CMAKE_CURRENT_LIST_DIR}/tsan_suppressions.cpp)
  link_libraries($<BUILD_INTERFACE:rstorm_tsan_suppressions>)
endif()

# rstorm_library(<piece> [STATIC|SHARED] SOURCES ... DEPS ...)
# Defines target rstorm_<piece> with alias rstorm::<piece>.
function(rstorm_library piece)
  cmake_parse_arguments(ARG "SHARED" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(kind STATIC)
  if(ARG_SHARED)
    set(kind SHARED)
  endif()
  string(REPLACE "-" "_" target "rstorm_${piece}")
  add_library(${target} ${kind} ${ARG_SOURCES})
  add_library(rstorm::${piece} ALIAS ${target})
  target_compile_options(${target} PRIVATE ${RSTORM_WARNINGS})
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# rstorm_executable(<name> SOURCES ... DEPS ...)
function(rstorm_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${RSTORM_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
endfunction()

# rstorm_test(<name> SOURCES ... DEPS ... [LABELS ...])
# A GoogleTest binary, each test registered with ctest.
function(rstorm_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${RSTORM_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  # A test's own files drive the engine and check what it did; the engine
  # libraries they link keep -O2. Unoptimized, the gtest and gmock heavy test
  # files compile in about 17 % less time (40 % for the largest).
  target_compile_options(${name} PRIVATE $<$<CONFIG:RelWithDebInfo>:-O0>)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
endfunction()
include(GoogleTest)
