ridge_add_test(test-conv LABELS fast)
add_test(NAME cli-conv COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-conv.sh $<TARGET_FILE:ridge>)
set_tests_properties(cli-conv PROPERTIES LABELS fast TIMEOUT 300)
ridge_add_test(test-conv-random LABELS fast)
