ridge_add_test(test-profile LABELS fast)
