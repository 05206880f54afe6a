ridge_add_test(test-conv-backward LABELS fast)
