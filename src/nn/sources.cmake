ridge_add_sources(portable
  src/nn/act.c
  src/nn/dense.c
  src/nn/dropout.c
  src/nn/loss.c
  src/nn/optim.c
  src/nn/util.c)
