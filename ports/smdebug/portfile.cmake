# vcpkg overlay port for smdebug-cpp, built from the checkout it sits in:
#   vcpkg install smdebug --overlay-ports=<repository>/ports          (add [cli] for the CLI)
# then, in a consumer:
#   find_package(smdebug CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE smdebug::smdebug)
# scripts/check-packaging.py runs the CMake configure and install steps below (with these options)
# in CI, where vcpkg itself is not available.
set(VCPKG_BUILD_TYPE release)  # header-only: one configuration is enough
set(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../..")

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    cli SMDEBUG_BUILD_TOOLS
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DSMDEBUG_BUILD_TESTS=OFF
    -DSMDEBUG_BUILD_EXAMPLES=OFF
    -DSMDEBUG_BUILD_BENCHMARKS=OFF
    -DSMDEBUG_BUILD_FUZZERS=OFF
    -DSMDEBUG_INSTALL_CMAKEDIR=share/smdebug
    ${FEATURE_OPTIONS}
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup()  # the package files are already in share/smdebug

if("cli" IN_LIST FEATURES)
  vcpkg_copy_tools(TOOL_NAMES smdebug AUTO_CLEAN)
endif()
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/lib" "${CURRENT_PACKAGES_DIR}/share/doc")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE" "${SOURCE_PATH}/NOTICE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
