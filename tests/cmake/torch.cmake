# LibTorch layer tests: their own executable and translation unit, so the rest of the test build
# never compiles Torch's headers. Registered when smdebug::torch is built (SMDEBUG_WITH_TORCH).
if(TARGET smdebug::torch)
  add_executable(smdebug_torch_tests ${CMAKE_CURRENT_LIST_DIR}/../torch/test_torch.cpp $<TARGET_OBJECTS:smdebug_catch_main>)
  target_link_libraries(smdebug_torch_tests PRIVATE smdebug::torch smdebug_warnings Catch2::Catch2)
  target_compile_definitions(smdebug_torch_tests PRIVATE SMDEBUG_SHARED_DIR="${SMDEBUG_SHARED_DIR}")
  add_test(NAME torch_tests COMMAND smdebug_torch_tests)
  set_tests_properties(torch_tests PROPERTIES LABELS "torch")
endif()
