# vcpkg overlay port for smdebug-cpp, built from the checkout it sits in:
#   vcpkg install smdebug --overlay-ports=<repository>/ports          header-only (default features)
#   vcpkg install smdebug[compiled] --overlay-ports=...                 + smdebug::compiled (lib/libsmdebug.a)
#   vcpkg install smdebug[cli] --overlay-ports=...                      + the CLI (tools/smdebug)
# then, in a consumer (see the usage file):
#   find_package(smdebug CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE smdebug::smdebug)     # or smdebug::compiled (docs/compile.md)
# scripts/check-packaging.py runs the CMake configure / build / install steps below (the OPTIONS and
# OPTIONS_RELEASE lines, default features and [compiled]) in CI, where vcpkg itself is not available.
set(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../..")

# Header-only (default features): nothing is compiled for the library, so one configuration is
# enough. With [compiled] there is an archive, and vcpkg's debug build gets its own (debug/lib:
# -O0 -g, what a Debug consumer wants to step into) as vcpkg expects of a library port; a triplet
# with VCPKG_BUILD_TYPE release still skips it. The debug configuration never builds the CLI.
if(NOT "compiled" IN_LIST FEATURES)
  set(VCPKG_BUILD_TYPE release)
else()
  vcpkg_check_linkage(ONLY_STATIC_LIBRARY)  # smdebug::compiled is a static library (PIC)
endif()

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    cli SMDEBUG_BUILD_TOOLS
    compiled SMDEBUG_COMPILED
)

# SMDEBUG_WITH_TORCH=OFF: what is packaged must not depend on a LibTorch the build machine happens
# to have (smdebug::torch is for source builds that find one).
vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DSMDEBUG_BUILD_TESTS=OFF
    -DSMDEBUG_BUILD_EXAMPLES=OFF
    -DSMDEBUG_BUILD_BENCHMARKS=OFF
    -DSMDEBUG_BUILD_FUZZERS=OFF
    -DSMDEBUG_WITH_TORCH=OFF
    -DSMDEBUG_INSTALL_CMAKEDIR=share/smdebug
    ${FEATURE_OPTIONS}
  OPTIONS_DEBUG
    -DSMDEBUG_BUILD_TOOLS=OFF
    -DSMDEBUG_INSTALL_CLI=OFF
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup()  # the package files are already in share/smdebug

if("cli" IN_LIST FEATURES)
  vcpkg_copy_tools(TOOL_NAMES smdebug AUTO_CLEAN)
endif()
if(NOT "compiled" IN_LIST FEATURES)  # header-only: no binaries
  file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/lib" "${CURRENT_PACKAGES_DIR}/debug/lib")
endif()
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc" "${CURRENT_PACKAGES_DIR}/debug/include"
                    "${CURRENT_PACKAGES_DIR}/debug/share")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE" "${SOURCE_PATH}/NOTICE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
