ridge_add_sources(portable
  src/io/llmc.c
  src/io/llmc-loader.c)
