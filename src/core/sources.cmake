ridge_add_sources(portable
  src/core/status.c
  src/core/cpu.c
  src/core/alloc.c
  src/core/pool.c
  src/core/ctx.c
  src/core/timer.c
  src/core/profile.c)
