ridge_add_test(test-llmc LABELS fast)
