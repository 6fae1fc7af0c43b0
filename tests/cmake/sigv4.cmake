# SigV4 test vectors: one CTest per top-level *.json whose "format" is "sigv4-test-vectors", each
# run through tools/sigv4/sigv4_vectors. The vendored set is tests/data/sigv4 (AWS SigV4 test suite,
# aws-c-auth signing suite, S3 documentation examples and generated S3 requests, all checked with
# botocore); an optional SMDEBUG_SHARED_DIR/sigv4 adds its files as sigv4.extra.<name>.
# Files are inspected at configure time; adding, removing or editing one re-runs the configure step.
function(_smdebug_add_sigv4_tests dir prefix out_count)
  set(count 0)
  file(GLOB files LIST_DIRECTORIES false CONFIGURE_DEPENDS "${dir}/*.json")
  list(SORT files)
  foreach(file IN LISTS files)
    if(NOT EXISTS "${file}" OR IS_DIRECTORY "${file}")
      # A name containing ';' is split by CMake's list handling: it cannot be registered.
      smdebug_missing_test(${prefix}unreadable "sigv4: '${file}' cannot be registered (';' in a file name?)")
      continue()
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
    file(READ "${file}" json)
    string(JSON format ERROR_VARIABLE error GET "${json}" format)
    if(NOT error AND format STREQUAL "sigv4-test-vectors")
      get_filename_component(name "${file}" NAME_WE)
      if(TARGET sigv4_vectors)
        add_test(NAME ${prefix}${name} COMMAND sigv4_vectors "${file}")
      else()
        smdebug_missing_test(${prefix}${name} "the sigv4_vectors tool is not built (tools/sigv4/sigv4_vectors.cpp)")
      endif()
      set_tests_properties(${prefix}${name} PROPERTIES LABELS sigv4 TIMEOUT 120)
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  set(${out_count} ${count} PARENT_SCOPE)
endfunction()

_smdebug_add_sigv4_tests("${SMDEBUG_TEST_DATA_DIR}/sigv4" "sigv4." _smdebug_sigv4_count)
if(_smdebug_sigv4_count EQUAL 0)
  smdebug_missing_test(sigv4.vectors
    "no SigV4 vector file (\"format\": \"sigv4-test-vectors\") in ${SMDEBUG_TEST_DATA_DIR}/sigv4")
endif()
if(SMDEBUG_SHARED_DIR AND IS_DIRECTORY "${SMDEBUG_SHARED_DIR}/sigv4")
  _smdebug_add_sigv4_tests("${SMDEBUG_SHARED_DIR}/sigv4" "sigv4.extra." _smdebug_sigv4_extra_count)
endif()
unset(_smdebug_sigv4_count)
unset(_smdebug_sigv4_extra_count)
