ridge_add_sources(portable
  src/models/mlp.c
  src/models/mlp-checkpoint.c)
ridge_add_sources(portable
  src/models/cnn.c
  src/models/cnn-checkpoint.c)
