ridge_add_sources(portable
  src/gemm/gemm.c
  src/gemm/gemm-ref.c)
ridge_add_sources(avx2 src/gemm/f32-gemm-6x16-avx2.c)
ridge_add_sources(avx512 src/gemm/f32-gemm-avx512.c)
