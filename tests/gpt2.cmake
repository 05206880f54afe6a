ridge_add_test(test-gpt2 LABELS fast)
