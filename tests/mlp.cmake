ridge_add_test(test-mlp LABELS fast)
target_link_libraries(test-mlp PRIVATE ridge_io)
ridge_add_test_run(test-mlp-fashion test-mlp LABELS full ARGS --full)
# The CLI end to end on a Fashion-MNIST subset (skipped when the dataset is not installed).
add_test(NAME cli-mlp COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-mlp.sh $<TARGET_FILE:ridge>)
set_tests_properties(cli-mlp PROPERTIES LABELS fast TIMEOUT 300 SKIP_RETURN_CODE 77)
