ridge_add_test(test-perf LABELS fast)
ridge_add_test(test-roofline-probe LABELS full)
