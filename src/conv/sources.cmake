ridge_add_sources(portable
  src/conv/conv.c
  src/conv/conv-tune.c
  src/conv/conv-ref.c
  src/conv/conv-algos.c
  src/conv/conv-fft.c
  src/conv/pool.c
  src/conv/pool-ref.c
  src/conv/f32-conv-6x16-scalar.c)
ridge_add_sources(avx2 src/conv/f32-conv-6x16-avx2.c src/conv/pool-avx2.c)
ridge_add_sources(avx512 src/conv/f32-conv-6x32-avx512.c src/conv/pool-avx512.c)
ridge_add_sources(portable
  src/conv/conv-backward.c
  src/conv/conv-backward-ref.c)
