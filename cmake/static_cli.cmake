# The smdebug CLI links its libraries (libstdc++, OpenSSL, Boost.JSON) statically when their
# archives are installed: a command that reads a trial in 30–100 ms spent 5–7 ms of it loading and
# relocating shared libraries (libcrypto alone has ~20,000 relocations), each first touch of a
# page being a page fault (costly under virtualisation). The program stays position-independent
# (ASLR). SMDEBUG_STATIC_CLI=OFF, or a missing archive, links the shared libraries as before.
# Sanitizer builds always link dynamically.
if(NOT DEFINED SMDEBUG_SANITIZE OR SMDEBUG_SANITIZE STREQUAL "")
  set(_smdebug_static_cli_default ON)
else()
  set(_smdebug_static_cli_default OFF)
endif()
option(SMDEBUG_STATIC_CLI "Link the smdebug CLI's libraries statically where their archives exist" ${_smdebug_static_cli_default})

function(smdebug_link_statically target)
  if(NOT SMDEBUG_STATIC_CLI OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    return()
  endif()
  find_library(SMDEBUG_LIBSSL_ARCHIVE NAMES libssl.a)
  find_library(SMDEBUG_LIBCRYPTO_ARCHIVE NAMES libcrypto.a)
  find_library(SMDEBUG_BOOST_JSON_ARCHIVE NAMES libboost_json.a HINTS ${Boost_LIBRARY_DIRS})
  find_library(SMDEBUG_BOOST_CONTAINER_ARCHIVE NAMES libboost_container.a HINTS ${Boost_LIBRARY_DIRS})
  foreach(archive SMDEBUG_LIBSSL_ARCHIVE SMDEBUG_LIBCRYPTO_ARCHIVE SMDEBUG_BOOST_JSON_ARCHIVE SMDEBUG_BOOST_CONTAINER_ARCHIVE)
    if(NOT ${archive})
      message(STATUS "smdebug CLI: ${archive} not found, linking shared libraries")
      return()
    endif()
  endforeach()
  # The library target without its link interface (its libraries come from the archives here).
  add_library(${target}_headers INTERFACE)
  target_include_directories(${target}_headers INTERFACE $<TARGET_PROPERTY:smdebug,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_features(${target}_headers INTERFACE cxx_std_20)
  target_link_libraries(${target}_headers INTERFACE Boost::headers xtensor Threads::Threads)
  set(_library)
  if(TARGET smdebug_compiled)  # the library compiled once, as its archive (its dependencies are the archives below)
    target_compile_definitions(${target}_headers INTERFACE SMDEBUG_SEPARATE_COMPILATION)
    set(_library $<TARGET_FILE:smdebug_compiled>)
    add_dependencies(${target} smdebug_compiled)
  endif()
  set_property(TARGET ${target} PROPERTY LINK_LIBRARIES "")
  target_link_libraries(${target} PRIVATE ${target}_headers smdebug_warnings ${_library}
                        ${SMDEBUG_BOOST_JSON_ARCHIVE} ${SMDEBUG_BOOST_CONTAINER_ARCHIVE}
                        ${SMDEBUG_LIBSSL_ARCHIVE} ${SMDEBUG_LIBCRYPTO_ARCHIVE} ${CMAKE_DL_LIBS})
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  # The ~24,000 relative relocations of the static OpenSSL as a packed table (DT_RELR, glibc >= 2.36,
  # binutils >= 2.38): .rela.dyn shrinks from 580 KB to 7 KB, which the loader reads at every start
  # (`smdebug --help`: 10 % fewer CPU samples, about 0.5 ms). ASLR is unchanged.
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-Wl,-z,pack-relative-relocs" SMDEBUG_LINKER_PACK_RELATIVE_RELOCS)
  if(SMDEBUG_LINKER_PACK_RELATIVE_RELOCS)
    target_link_options(${target} PRIVATE -Wl,-z,pack-relative-relocs)
  endif()
  message(STATUS "smdebug CLI: libstdc++, OpenSSL and Boost.JSON linked statically")
endfunction()
