# `smdebug serve` (tools/cli/serve.cpp, tools/serve/): its page's files are compiled into the CLI
# by embed.cmake, at build time. The charts are drawn by uPlot, pinned in tools/serve/web/package.json
# (package-lock.json): `npm ci` there (scripts/quickstart.sh and scripts/test.sh do it) puts
# node_modules/uplot/dist/ in place, and the build embeds uPlot.iife.min.js and uPlot.min.css from it.
# SMDEBUG_SERVE_CHARTS:
#   AUTO (default)  embed uPlot when node_modules holds it; otherwise build the page without charts
#                   (runs, tensors, rules and the API all work; the chart area says how to get the
#                   charts) and say so: a configure warning, and a line from `smdebug serve` at start.
#                   What an offline package build (the vcpkg port, conan) gets without npm.
#   ON              fail the configure when uPlot is not there (scripts/test.sh: the browser tests need it).
#   OFF             never embed it.
# SMDEBUG_SERVE_UPLOT_DIR: where uPlot's dist/ files are (default: tools/serve/web/node_modules/uplot/dist).
# SMDEBUG_SERVE=OFF builds the CLI without the `serve` command (and without its translation unit):
# what the sanitizer builds of scripts/test-sanitizers.sh do, whose tests never run it.
option(SMDEBUG_SERVE "Build the `smdebug serve` command (tools/cli/serve.cpp, Boost.Beast)" ON)
if(NOT SMDEBUG_SERVE)
  set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/../cli/main.cpp APPEND PROPERTY COMPILE_DEFINITIONS SMDEBUG_WITHOUT_SERVE)
  return()
endif()
target_sources(smdebug_cli PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../cli/serve.cpp)
set(SMDEBUG_SERVE_CHARTS AUTO CACHE STRING "Embed the uPlot charts in smdebug serve's page: AUTO, ON, OFF")
set_property(CACHE SMDEBUG_SERVE_CHARTS PROPERTY STRINGS AUTO ON OFF)
set(SMDEBUG_SERVE_UPLOT_DIR "${CMAKE_CURRENT_LIST_DIR}/web/node_modules/uplot/dist" CACHE PATH
    "Folder holding uPlot.iife.min.js and uPlot.min.css (npm ci in tools/serve/web)")
set(_serve_web ${CMAKE_CURRENT_LIST_DIR}/web)
set(_serve_files "index.html=${_serve_web}/index.html" "app.js=${_serve_web}/app.js" "style.css=${_serve_web}/style.css")
set(_serve_depends ${_serve_web}/index.html ${_serve_web}/app.js ${_serve_web}/style.css ${CMAKE_CURRENT_LIST_DIR}/embed.cmake)
set(_uplot_js "${SMDEBUG_SERVE_UPLOT_DIR}/uPlot.iife.min.js")
set(_uplot_css "${SMDEBUG_SERVE_UPLOT_DIR}/uPlot.min.css")
string(TOUPPER "${SMDEBUG_SERVE_CHARTS}" _serve_charts)
if(NOT _serve_charts MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "SMDEBUG_SERVE_CHARTS must be AUTO, ON or OFF (got \"${SMDEBUG_SERVE_CHARTS}\")")
endif()
set(_serve_with_charts OFF)
if(NOT _serve_charts STREQUAL "OFF")
  if(EXISTS "${_uplot_js}" AND EXISTS "${_uplot_css}")
    set(_serve_with_charts ON)
    list(APPEND _serve_files "uplot.js=${_uplot_js}" "uplot.css=${_uplot_css}")
    list(APPEND _serve_depends "${_uplot_js}" "${_uplot_css}")
  elseif(_serve_charts STREQUAL "ON")  # not if(SMDEBUG_SERVE_CHARTS): the string AUTO is true in CMake
    message(FATAL_ERROR "SMDEBUG_SERVE_CHARTS=ON but ${_uplot_js} is missing: run `npm ci` in ${_serve_web}")
  else()
    message(WARNING "smdebug serve: uPlot not found at ${SMDEBUG_SERVE_UPLOT_DIR}: the page is built without charts "
                    "(run `npm ci` in ${_serve_web} and configure again to have them; docs/serve.md)")
  endif()
endif()
set(_serve_header ${CMAKE_CURRENT_BINARY_DIR}/serve_generated/serve_assets.hpp)
add_custom_command(OUTPUT ${_serve_header}
                   COMMAND ${CMAKE_COMMAND} "-DOUT=${_serve_header}" "-DFILES=${_serve_files}" -P ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
                   DEPENDS ${_serve_depends}
                   COMMENT "Embedding smdebug serve's page" VERBATIM)
target_sources(smdebug_cli PRIVATE ${_serve_header})
target_include_directories(smdebug_cli PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/serve_generated)
target_compile_definitions(smdebug_cli PRIVATE SMDEBUG_SERVE_CHARTS=$<BOOL:${_serve_with_charts}>)
unset(_serve_web)
unset(_serve_charts)
unset(_serve_files)
unset(_serve_depends)
unset(_uplot_js)
unset(_uplot_css)
unset(_serve_header)
