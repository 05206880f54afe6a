ridge_add_test(test-nn-conv LABELS fast)
