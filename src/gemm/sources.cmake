ridge_add_sources(portable
  src/gemm/gemm.c
  src/gemm/gemm-ref.c)
