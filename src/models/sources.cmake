ridge_add_sources(portable
  src/models/mlp.c
  src/models/mlp-checkpoint.c)
