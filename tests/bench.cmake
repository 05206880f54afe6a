if(RIDGE_BUILD_BENCH)
  add_test(NAME cli-bench COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-bench.sh $<TARGET_FILE:ridge>)
  set_tests_properties(cli-bench PROPERTIES LABELS fast TIMEOUT 300)
endif()
