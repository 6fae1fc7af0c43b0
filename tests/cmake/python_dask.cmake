# smdebug_cpp.dask (issue 24): pytest on a distributed.LocalCluster of 2 worker processes; its S3
# case runs against the s3rver instances of tests/s3rver/run-with-s3rver.sh (fixture s3rver of
# s3.cmake). SMDEBUG_PYTHON is a Python that imports smdebug_cpp (the package of python/, see
# docs/python.md), dask, distributed, pandas and boto3.
find_package(Python3 COMPONENTS Interpreter QUIET)
find_program(SMDEBUG_BASH_EXECUTABLE bash)
set(SMDEBUG_PYTHON "${Python3_EXECUTABLE}" CACHE FILEPATH "Python interpreter with smdebug_cpp installed (Dask tests)")
if(SMDEBUG_PYTHON AND SMDEBUG_BASH_EXECUTABLE)
  add_test(NAME python.dask
           COMMAND "${SMDEBUG_BASH_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/s3rver/run-with-s3rver.sh" run
                   "${CMAKE_BINARY_DIR}/s3rver" "${SMDEBUG_PYTHON}" -m pytest -q -p no:cacheprovider
                   "${CMAKE_CURRENT_SOURCE_DIR}/python/test_dask.py")
  set_tests_properties(python.dask PROPERTIES
    FIXTURES_REQUIRED s3rver LABELS "python;s3rver" TIMEOUT 300 RUN_SERIAL ON
    ENVIRONMENT "SMDEBUG_CLI=$<TARGET_FILE:smdebug_cli>;SMDEBUG_CRASH_WRITER=$<TARGET_FILE:crash_writer>")
else()
  smdebug_missing_test(python.dask "the Dask tests need python3 (SMDEBUG_PYTHON) and bash")
endif()
