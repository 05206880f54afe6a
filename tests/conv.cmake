# test-conv runs as three shards (--shard K/3: every third shape or group), so that the
# sanitizer builds run them side by side and each stays well inside ctest's time limit.
ridge_add_test(test-conv LABELS fast ARGS --shard 0/3)
foreach(k 1 2)
  ridge_add_test_run(test-conv-${k}of3 test-conv LABELS fast ARGS --shard ${k}/3)
endforeach()
add_test(NAME cli-conv COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-conv.sh $<TARGET_FILE:ridge>)
set_tests_properties(cli-conv PROPERTIES LABELS fast TIMEOUT 300)
ridge_add_test(test-conv-random LABELS fast)
