ridge_add_test(test-cnn LABELS fast)
target_link_libraries(test-cnn PRIVATE ridge_io)
ridge_add_test_run(test-cnn-fashion test-cnn LABELS full ARGS --full)
