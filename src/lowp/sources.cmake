ridge_add_sources(portable
  src/lowp/lowp.c
  src/lowp/lowp-ref.c
  src/lowp/qconv.c)
ridge_add_sources(avx2 src/lowp/u8s8-gemm-6x16c2-avx2.c src/lowp/bf16-gemm-6x16-avx2.c)
ridge_add_sources(avxvnni src/lowp/u8s8-gemm-6x16c4-avxvnni.c)
ridge_add_sources(vnni src/lowp/u8s8-gemm-14x32c4-avx512vnni.c)
ridge_add_sources(bf16 src/lowp/bf16-gemm-14x32c2-avx512bf16.c)
