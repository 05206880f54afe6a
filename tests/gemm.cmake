ridge_add_test(test-gemm LABELS fast)
