# Rules: the compile-time custom rule example is built and run (it writes a small run of its own
# and must find the step where its weight explodes).
if(TARGET custom_rule)
  add_test(NAME example.custom_rule COMMAND custom_rule)
  set_tests_properties(example.custom_rule PROPERTIES LABELS rules TIMEOUT 120)
endif()
