ridge_add_test(test-conv LABELS fast)
