# The documents: docs.links (every relative link in README.md, DEVELOPERS.md, CHANGELOG.md,
# CONTRIBUTING.md, docs/ and tests/data/README.md resolves inside the repository, anchors included;
# nothing points at ../shared; every section, deviation id and heading the code and documents cite
# exists) and docs.deviations (every deviation id the conformance cases use is explained in
# docs/deviations.md). Both run scripts/check-links.py; without python3 they fail.
find_package(Python3 COMPONENTS Interpreter QUIET)
foreach(_check links deviations)
  if(Python3_Interpreter_FOUND)
    add_test(NAME docs.${_check} COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/scripts/check-links.py ${_check})
  else()
    smdebug_missing_test(docs.${_check} "python3 is needed to check the documents (scripts/setup-deps.sh installs it)")
  endif()
  set_tests_properties(docs.${_check} PROPERTIES LABELS docs TIMEOUT 60)
endforeach()
unset(_check)
