ridge_add_test(test-nn LABELS fast)
