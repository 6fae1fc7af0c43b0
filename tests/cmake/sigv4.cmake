# SigV4 test vectors: one CTest per top-level *.json in ${SMDEBUG_SHARED_DIR}/sigv4 whose
# "format" is "sigv4-test-vectors", each run through tools/sigv4/sigv4_vectors.
# Files are inspected at configure time; adding, removing or editing one re-runs the configure step.
if(TARGET sigv4_vectors AND IS_DIRECTORY "${SMDEBUG_SHARED_DIR}/sigv4")
  file(GLOB _smdebug_sigv4_files LIST_DIRECTORIES false CONFIGURE_DEPENDS "${SMDEBUG_SHARED_DIR}/sigv4/*.json")
  list(SORT _smdebug_sigv4_files)
  foreach(_smdebug_sigv4_file IN LISTS _smdebug_sigv4_files)
    if(NOT EXISTS "${_smdebug_sigv4_file}" OR IS_DIRECTORY "${_smdebug_sigv4_file}")
      # A name containing ';' is split by CMake's list handling: it cannot be registered.
      message(WARNING "sigv4: skipping '${_smdebug_sigv4_file}' (not a file; ';' in a file name?)")
      continue()
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_smdebug_sigv4_file}")
    file(READ "${_smdebug_sigv4_file}" _smdebug_sigv4_json)
    string(JSON _smdebug_sigv4_format ERROR_VARIABLE _smdebug_sigv4_error GET "${_smdebug_sigv4_json}" format)
    if(NOT _smdebug_sigv4_error AND _smdebug_sigv4_format STREQUAL "sigv4-test-vectors")
      get_filename_component(_smdebug_sigv4_name "${_smdebug_sigv4_file}" NAME_WE)
      add_test(NAME sigv4.${_smdebug_sigv4_name}
               COMMAND sigv4_vectors "${_smdebug_sigv4_file}")
      set_tests_properties(sigv4.${_smdebug_sigv4_name} PROPERTIES LABELS "sigv4")
    endif()
  endforeach()
  unset(_smdebug_sigv4_json)
  unset(_smdebug_sigv4_format)
  unset(_smdebug_sigv4_error)
  unset(_smdebug_sigv4_name)
  unset(_smdebug_sigv4_file)
  unset(_smdebug_sigv4_files)
endif()
