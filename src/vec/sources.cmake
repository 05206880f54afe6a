ridge_add_sources(portable
  src/vec/vec.c
  src/vec/vec-ref.c)
ridge_add_sources(avx2 src/vec/vec-avx2.c)
ridge_add_sources(avx512 src/vec/vec-avx512.c)
