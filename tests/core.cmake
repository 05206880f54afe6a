ridge_add_test(test-core LABELS fast)
ridge_add_test(test-pool LABELS fast)
ridge_add_test_run(test-pool-stress test-pool LABELS full ARGS --stress)
