ridge_add_sources(portable
  src/vec/vec.c
  src/vec/vec-ref.c)
