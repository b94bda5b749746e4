# Every third-party dependency, found once. All come from Debian 12's packages
# (see bootstrap.sh for the install line).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(Boost 1.74 CONFIG REQUIRED COMPONENTS system filesystem program_options)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(RocksDB CONFIG REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(GTest CONFIG REQUIRED)

pkg_check_modules(THRIFT REQUIRED IMPORTED_TARGET thrift)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)

# The ZooKeeper C client ships neither a CMake config nor a .pc file.
find_path(ZOOKEEPER_INCLUDE_DIR zookeeper/zookeeper.h REQUIRED)
find_library(ZOOKEEPER_MT_LIBRARY zookeeper_mt REQUIRED)
if(NOT TARGET rstorm_zookeeper)
  add_library(rstorm_zookeeper INTERFACE IMPORTED)
  target_include_directories(rstorm_zookeeper INTERFACE ${ZOOKEEPER_INCLUDE_DIR})
  target_link_libraries(rstorm_zookeeper INTERFACE ${ZOOKEEPER_MT_LIBRARY})
  # Without THREADED the multi-threaded API (zoo_create, zoo_get) is not declared.
  target_compile_definitions(rstorm_zookeeper INTERFACE THREADED)
endif()

find_program(THRIFT_COMPILER thrift REQUIRED)
