# Debian packages with CPack, from an ordinary build folder (no second build):
#   cmake --build build --target package      (or: cd build && cpack -G DEB)
# writes build/packages/rstorm_<version>_<arch>.deb (the runtime: CLI, daemons,
# librstorm-api, /etc/rstorm/rstorm.yaml, systemd units for rstorm-nimbus,
# rstorm-supervisor and rstorm-ui running as the system user `rstorm` with their state in
# /var/lib/rstorm and their logs in the journal) and rstorm-dev_<version>_<arch>.deb
# (headers, the CMake package, the examples' sources). Dependencies come from
# dpkg-shlibdeps. The packages install under /usr; binaries are stripped.
#
# Components: "runtime" and "dev" (cmake/RstormInstall.cmake) go in as they are;
# "deb" holds what only the package has (units, the /etc config), installed with
# absolute paths and excluded from `cmake --install`; "config" (a prefix's
# etc/rstorm/rstorm.yaml) stays out of the package, which has /etc's instead.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/deb/rstorm.yaml
        DESTINATION /etc/rstorm COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/deb/rstorm-nimbus.service
              ${PROJECT_SOURCE_DIR}/packaging/deb/rstorm-supervisor.service
              ${PROJECT_SOURCE_DIR}/packaging/deb/rstorm-ui.service
        DESTINATION /lib/systemd/system COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION /usr/share/doc/rstorm COMPONENT deb EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rstorm)
set(CPACK_PACKAGE_VENDOR "rstorm")
set(CPACK_PACKAGE_CONTACT "rstorm developers <rstorm-dev@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "resource-aware distributed stream processing (Storm's model, R-Storm's scheduler)")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
# Absolute destinations (the "deb" component) need DESTDIR-style staging.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime deb dev)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_COMPONENT_RUNTIME_GROUP rstorm)
set(CPACK_COMPONENT_DEB_GROUP rstorm)
set(CPACK_COMPONENT_DEV_GROUP rstorm-dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_RSTORM_PACKAGE_NAME rstorm)
set(CPACK_DEBIAN_RSTORM-DEV_PACKAGE_NAME rstorm-dev)
set(CPACK_DEBIAN_RSTORM_PACKAGE_SECTION net)
set(CPACK_DEBIAN_RSTORM-DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RSTORM-DEV_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_RSTORM_PACKAGE_DEPENDS "passwd")
# dev-cluster's ZooKeeper, the daemons' ZooKeeper on a single machine.
set(CPACK_DEBIAN_RSTORM_PACKAGE_RECOMMENDS "zookeeper, default-jre-headless")
set(CPACK_DEBIAN_RSTORM-DEV_PACKAGE_DEPENDS "rstorm (= ${PROJECT_VERSION}), cmake (>= 3.25), g++ (>= 4:12), libboost-dev (>= 1.74)")
set(CPACK_DEBIAN_RSTORM-DEV_PACKAGE_RECOMMENDS "libgtest-dev")
set(CPACK_DEBIAN_RSTORM_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/deb/conffiles
    ${PROJECT_SOURCE_DIR}/packaging/deb/postinst
    ${PROJECT_SOURCE_DIR}/packaging/deb/prerm
    ${PROJECT_SOURCE_DIR}/packaging/deb/postrm)
set(CPACK_DEBIAN_RSTORM_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
