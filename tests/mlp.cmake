ridge_add_test(test-mlp LABELS fast)
target_link_libraries(test-mlp PRIVATE ridge_io)
ridge_add_test_run(test-mlp-fashion test-mlp LABELS full ARGS --full)
