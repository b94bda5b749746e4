# `cmake --install`: what a user of rstorm needs, in the GNUInstallDirs layout.
#   bin/        rstorm, rstorm-nimbus, rstorm-supervisor, rstorm-worker, rstorm-ui (they run
#               each other from their own folder and find librstorm-api through
#               a RUNPATH relative to themselves, so the prefix can move)
#   lib/        librstorm-api.so.<API version>, librstorm-testing.so.<API version>
#               (the in-process test harness, rstorm/testing.hpp),
#               librstorm-civetweb-{ssl,crypto}.so (what HTTPS on /metrics loads,
#               common/metrics/civetweb_openssl)
#   include/rstorm/         the topology API
#   lib/cmake/rstorm/       the CMake package: find_package(rstorm) gives
#                           rstorm::api and rstorm_add_topology()
#   etc/rstorm/rstorm.yaml  this machine's config, read when no --config is given
#   share/rstorm/           defaults.yaml, rstorm.yaml.example, the Prometheus
#                           config, the Grafana dashboard, examples' sources,
#                           clusters/ and examples/paper/ (`rstorm schedule`'s
#                           described clusters and topologies)
# Components: "runtime" (binaries, library, share/rstorm), "config" (the
# prefix's etc/rstorm/rstorm.yaml) and "dev" (headers, CMake package, examples);
# the Debian packages (cmake/RstormPackage.cmake) take runtime and dev.
include(CMakePackageConfigHelpers)

set(RSTORM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rstorm)
set(RSTORM_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/rstorm)

install(TARGETS rstorm rstorm-nimbus rstorm-supervisor rstorm-worker rstorm-ui
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS rstorm_api rstorm_testing EXPORT rstormTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS rstorm_civetweb_ssl rstorm_civetweb_crypto
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/rstorm/civetweb-openssl COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/topology-api/include/rstorm
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/worker/testing/include/rstorm/testing.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rstorm COMPONENT dev)

install(EXPORT rstormTargets NAMESPACE rstorm:: DESTINATION ${RSTORM_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rstormConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/rstormConfig.cmake
  INSTALL_DESTINATION ${RSTORM_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x: a minor release may change the API, so 0.1 accepts 0.1.* only.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/rstormConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rstormConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/rstormConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/RstormTopology.cmake
        DESTINATION ${RSTORM_CMAKE_DIR} COMPONENT dev)

install(FILES ${PROJECT_SOURCE_DIR}/packaging/rstorm.yaml
        DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}/rstorm COMPONENT config)
install(FILES ${PROJECT_SOURCE_DIR}/conf/defaults.yaml ${PROJECT_SOURCE_DIR}/conf/rstorm.yaml.example
        DESTINATION ${RSTORM_SHARE_DIR} COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/conf/prometheus ${PROJECT_SOURCE_DIR}/conf/grafana
                  ${PROJECT_SOURCE_DIR}/conf/clusters
        DESTINATION ${RSTORM_SHARE_DIR} COMPONENT runtime)
# The R-Storm paper's topologies as `rstorm schedule` reads them (YAML), for
# the scheduler's dry runs against share/rstorm/clusters.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/paper
        DESTINATION ${RSTORM_SHARE_DIR}/examples COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/word_count ${PROJECT_SOURCE_DIR}/examples/exclamation
                  ${PROJECT_SOURCE_DIR}/examples/top_words
        DESTINATION ${RSTORM_SHARE_DIR}/examples COMPONENT dev)

include(RstormPackage)
