ridge_add_test(test-quant LABELS fast)
target_link_libraries(test-quant PRIVATE ridge_io)
ridge_add_test_run(test-quant-fashion test-quant LABELS full ARGS --full)
