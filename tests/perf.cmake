ridge_add_test(test-perf LABELS fast)
ridge_add_test(test-roofline-probe LABELS full)
# It times the machine against itself: with another test running beside it (ctest -j), the
# two probes see different loads and disagree. RUN_SERIAL keeps it alone under any -j.
set_tests_properties(test-roofline-probe PROPERTIES RUN_SERIAL TRUE)
