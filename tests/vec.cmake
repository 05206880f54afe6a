ridge_add_test(test-vec LABELS fast)
ridge_add_test_run(test-vec-exhaustive test-vec LABELS full ARGS --exhaustive)
