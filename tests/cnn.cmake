ridge_add_test(test-cnn LABELS fast)
target_link_libraries(test-cnn PRIVATE ridge_io)
ridge_add_test_run(test-cnn-fashion test-cnn LABELS full ARGS --full)
# The first training steps against PyTorch from the same weights (needs python3-torch).
add_test(NAME cnn-vs-pytorch
         COMMAND ${PROJECT_SOURCE_DIR}/scripts/cnn-vs-pytorch.py check --test $<TARGET_FILE:test-cnn>)
set_tests_properties(cnn-vs-pytorch PROPERTIES LABELS full SKIP_RETURN_CODE 77 TIMEOUT 600)
add_test(NAME cli-cnn COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-cnn.sh $<TARGET_FILE:ridge>)
set_tests_properties(cli-cnn PROPERTIES LABELS fast TIMEOUT 300 SKIP_RETURN_CODE 77)
