ridge_add_test(test-lowp LABELS fast)
ridge_add_test_run(test-lowp-full test-lowp LABELS full ARGS --full)
