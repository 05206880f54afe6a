ridge_add_sources(portable
  src/models/mlp.c
  src/models/mlp-checkpoint.c
  src/models/cnn.c
  src/models/cnn-checkpoint.c
  src/models/checkpoint.c
  src/models/trainer.c
  src/models/gpt2-layers.c
  src/models/gpt2.c)
ridge_add_sources(avx2 src/models/gpt2-kernels-avx2.c)
ridge_add_sources(avx512 src/models/gpt2-kernels-avx512.c)
