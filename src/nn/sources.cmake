ridge_add_sources(portable
  src/nn/act.c
  src/nn/dense.c
  src/nn/dropout.c
  src/nn/loss.c
  src/nn/optim.c
  src/nn/optim-ref.c
  src/nn/util.c)
ridge_add_sources(portable
  src/nn/conv-layer.c
  src/nn/pool.c
  src/nn/batchnorm.c
  src/nn/bn-ref.c
  src/nn/pool-ref.c)
# One optimizer template compiled per ISA; -fno-math-errno lets sqrtf vectorize.
ridge_add_sources(avx2 src/nn/optim-avx2.c)
ridge_add_sources(avx512 src/nn/optim-avx512.c)
# The batch-norm and training pooling loops likewise (bn-kernels.h, pool-kernels.h).
ridge_add_sources(avx2 src/nn/bn-avx2.c src/nn/pool-avx2.c)
ridge_add_sources(avx512 src/nn/bn-avx512.c src/nn/pool-avx512.c)
set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/src/nn/optim-ref.c
  ${CMAKE_CURRENT_SOURCE_DIR}/src/nn/optim-avx2.c ${CMAKE_CURRENT_SOURCE_DIR}/src/nn/optim-avx512.c
  APPEND PROPERTY COMPILE_OPTIONS -fno-math-errno)
