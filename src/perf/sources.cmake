# src/perf: the roofline (probes, profile, judgement) and the JSON reader.
ridge_add_sources(portable
  src/perf/json.c
  src/perf/roofline.c
  src/perf/measure.c
  src/perf/probe-scalar.c
  src/perf/svg.c)
ridge_add_sources(avx2 src/perf/probe-avx2.c)
ridge_add_sources(avx512 src/perf/probe-avx512.c)
ridge_add_sources(vnni src/perf/probe-vnni.c)
ridge_add_sources(bf16 src/perf/probe-bf16.c)
ridge_add_sources(portable src/perf/profile-report.c)
