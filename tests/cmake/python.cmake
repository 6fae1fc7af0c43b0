# The Python package (python/, issue 24) and its Dask layer:
#   python.install  (FIXTURES_SETUP python)  builds the package into <build>/python-venv exactly as
#                                            docs/python.md says (scripts/python-venv.sh: venv with
#                                            --system-site-packages, pip install --no-build-isolation);
#   python.package                           tests/python/test_package.py: conformance through Python
#                                            (local and s3rver), zero-copy values, exceptions, rules,
#                                            a live trial, threads;
#   python.dask                              tests/python/test_dask.py on a 2-process LocalCluster;
#   python.pytorch_hook                      tests/python/test_pytorch_hook.py: smdebug_cpp.pytorch.Hook and
#                                            smdebug_cpp.Hook write (folders, s3rver), smdebug_cpp.trials
#                                            reads back (needs torch);
#   python.reference_pytorch                 with SMDEBUG_REFERENCE_CHECKOUT (a sagemaker-debugger work tree):
#                                            its tests/pytorch with smdebug_cpp.pytorch writing
#                                            (tests/python/run_reference_pytorch_tests.py), and
#   python.twin_trials                       the same loop through both hooks, the same trial
#                                            (tests/python/compare_with_reference_hook.py).
# SMDEBUG_PYTHON names another interpreter that already imports smdebug_cpp (then nothing is built).
find_program(SMDEBUG_BASH_EXECUTABLE bash)
set(SMDEBUG_PYTHON "" CACHE FILEPATH "Python interpreter with smdebug_cpp installed (default: <build>/python-venv, built by python.install)")
# The extension's optimisation level (python/setup.py reads SMDEBUG_PYTHON_OPT; the test preset: -O1).
set(SMDEBUG_PYTHON_OPT "-O2" CACHE STRING "Optimisation flag python.install compiles the package's extension with")
set(_smdebug_python "${SMDEBUG_PYTHON}")
if(NOT _smdebug_python)
  set(_smdebug_python "${CMAKE_BINARY_DIR}/python-venv/bin/python")
  if(SMDEBUG_BASH_EXECUTABLE)
    add_test(NAME python.install
             COMMAND "${SMDEBUG_BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/scripts/python-venv.sh" "${CMAKE_BINARY_DIR}/python-venv")
    set_tests_properties(python.install PROPERTIES FIXTURES_SETUP python LABELS python TIMEOUT 900 COST 1000
                         ENVIRONMENT "SMDEBUG_PYTHON_OPT=${SMDEBUG_PYTHON_OPT}")
  endif()
endif()
if(SMDEBUG_BASH_EXECUTABLE)
  foreach(_suite package dask pytorch_hook)
    add_test(NAME python.${_suite}
             COMMAND "${SMDEBUG_BASH_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/s3rver/run-with-s3rver.sh" run
                     "${CMAKE_BINARY_DIR}/s3rver-python-${_suite}" "${_smdebug_python}" -m pytest -q -p no:cacheprovider
                     "${CMAKE_CURRENT_SOURCE_DIR}/python/test_${_suite}.py")
    set_tests_properties(python.${_suite} PROPERTIES
      FIXTURES_REQUIRED "s3rver;python" LABELS "python;s3rver" TIMEOUT 600 COST 900
      ENVIRONMENT "SMDEBUG_CRASH_WRITER=$<TARGET_FILE:crash_writer>;SMDEBUG_CLI=$<TARGET_FILE:smdebug_cli>;SMDEBUG_ANALYSIS_TRIALS=$<TARGET_FILE:make_analysis_trials>")
  endforeach()
  set_tests_properties(python.dask PROPERTIES RUN_SERIAL ON)
  set(SMDEBUG_REFERENCE_CHECKOUT "" CACHE PATH "Work tree of awslabs/sagemaker-debugger: adds python.reference_pytorch")
  if(SMDEBUG_REFERENCE_CHECKOUT)
    add_test(NAME python.reference_pytorch
             COMMAND "${_smdebug_python}" "${CMAKE_CURRENT_SOURCE_DIR}/python/run_reference_pytorch_tests.py"
                     "${SMDEBUG_REFERENCE_CHECKOUT}")
    set_tests_properties(python.reference_pytorch PROPERTIES FIXTURES_REQUIRED python LABELS python TIMEOUT 1800 COST 900)
    add_test(NAME python.twin_trials
             COMMAND "${_smdebug_python}" "${CMAKE_CURRENT_SOURCE_DIR}/python/compare_with_reference_hook.py"
                     "${SMDEBUG_REFERENCE_CHECKOUT}")
    set_tests_properties(python.twin_trials PROPERTIES FIXTURES_REQUIRED python LABELS python TIMEOUT 600 COST 100)
  endif()
else()
  smdebug_missing_test(python.package "the Python tests need bash (tests/s3rver/run-with-s3rver.sh)")
endif()
