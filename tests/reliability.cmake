# Hostile input and crash safety (docs/RELIABILITY.md); the fuzzers themselves are fuzz/.
ridge_add_test(test-reliability LABELS fast)
target_link_libraries(test-reliability PRIVATE ridge_io)
# SIGKILL during checkpoint writes, then a full disk: 3 kills (fast, ~8 s), 100 kills (full).
add_test(NAME crash-safety-fast COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/crash-safety.sh
         $<TARGET_FILE:ridge> 3)
add_test(NAME crash-safety COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/crash-safety.sh
         $<TARGET_FILE:ridge> 100)
set_tests_properties(crash-safety-fast PROPERTIES LABELS fast TIMEOUT 300 SKIP_RETURN_CODE 77)
set_tests_properties(crash-safety PROPERTIES LABELS full TIMEOUT 1800 SKIP_RETURN_CODE 77)
