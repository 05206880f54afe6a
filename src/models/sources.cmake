ridge_add_sources(portable
  src/models/gpt2-layers.c
  src/models/gpt2.c)
