ridge_add_sources(portable
  src/vec/vec.c
  src/vec/vec-ref.c)
ridge_add_sources(avx2 src/vec/vec-avx2.c)
ridge_add_sources(avx512 src/vec/vec-avx512.c)
# Entry points and kernels start on a 64-byte boundary: a 10-element call is a few dozen
# instructions, and where they fall against the 64-byte fetch blocks moved its time by up to
# 20% from one build to the next (docs/PERFORMANCE.md, vec, session 3).
set_property(SOURCE src/vec/vec.c src/vec/vec-avx2.c src/vec/vec-avx512.c APPEND PROPERTY
  COMPILE_OPTIONS -falign-functions=64)
