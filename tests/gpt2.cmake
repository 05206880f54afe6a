ridge_add_test(test-gpt2 LABELS fast)
# An independent PyTorch GPT-2 as the oracle for loss, gradients, AdamW and the trainer
# (needs Debian's python3-torch, run by /usr/bin/python3; skipped without it).
add_test(NAME gpt2-torch-oracle
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/gpt2-torch-oracle.py $<TARGET_FILE:ridge>)
set_tests_properties(gpt2-torch-oracle PROPERTIES LABELS full SKIP_RETURN_CODE 77 TIMEOUT 600)
# The CLI end to end (init, train with validation/samples/save, generate) and its refusals.
add_test(NAME cli-gpt2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-gpt2.sh $<TARGET_FILE:ridge>)
set_tests_properties(cli-gpt2 PROPERTIES LABELS fast TIMEOUT 300 SKIP_RETURN_CODE 77)
