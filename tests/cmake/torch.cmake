# LibTorch layer tests: their own executable and translation unit, so the rest of the test build
# never compiles Torch's headers. Registered when smdebug::torch is built (SMDEBUG_WITH_TORCH).
if(TARGET smdebug::torch)
  add_executable(smdebug_torch_tests ${CMAKE_CURRENT_LIST_DIR}/../torch/test_torch.cpp $<TARGET_OBJECTS:smdebug_catch_main>)
  target_link_libraries(smdebug_torch_tests PRIVATE smdebug::torch smdebug_warnings Catch2::Catch2)
  add_test(NAME torch_tests COMMAND smdebug_torch_tests)
  set_tests_properties(torch_tests PROPERTIES LABELS "torch")
  # The live-rules example: a wrecked run (lr 50: the logits saturate, the loss hits 0 and the
    # gradients vanish) that VanishingGradient must catch while it trains.
  if(TARGET torch_convnet)
    add_test(NAME example.torch_convnet COMMAND sh -c "rm -rf \"$1\" && exec \"$0\" \"$1\" --steps 40 --lr 50"
             $<TARGET_FILE:torch_convnet> ${CMAKE_BINARY_DIR}/torch-convnet-run)
    set_tests_properties(example.torch_convnet PROPERTIES LABELS "torch" TIMEOUT 300
      PASS_REGULAR_EXPRESSION "rule VanishingGradient fired at step [0-9]+")
  endif()
  if(TARGET torch_mlp)
    add_test(NAME example.torch_mlp COMMAND sh -c "rm -rf \"$1\" && exec \"$0\" \"$1\" --steps 5"
             $<TARGET_FILE:torch_mlp> ${CMAKE_BINARY_DIR}/torch-mlp-run)
    set_tests_properties(example.torch_mlp PROPERTIES LABELS "torch" TIMEOUT 300)
  endif()
endif()
