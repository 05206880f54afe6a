ridge_add_test(test-perf LABELS fast)
