# llm.c's GPT-2 files: plain C, part of libridge itself.
ridge_add_sources(portable
  src/io/llmc.c
  src/io/llmc-loader.c)

# src/io: file formats that need zlib (gzip'd IDX). They form their own library, ridge_io,
# so that libridge itself depends only on libc, libm and pthreads. Without zlib, ridge_io
# still builds and reads plain IDX files; gzip'd ones fail with RIDGE_EUNSUPPORTED.
# The CLI and the io/mlp tests link ridge_io; it is installed next to libridge.
find_package(ZLIB)
add_library(ridge_io STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/src/io/idx.c
  ${CMAKE_CURRENT_SOURCE_DIR}/src/io/mnist.c
  ${CMAKE_CURRENT_SOURCE_DIR}/src/io/bpe.c)
target_include_directories(ridge_io
  PUBLIC  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
          $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(ridge_io PUBLIC ridge_static)
if(ZLIB_FOUND)
  target_compile_definitions(ridge_io PRIVATE RIDGE_HAVE_ZLIB=1)
  target_link_libraries(ridge_io PUBLIC ZLIB::ZLIB)
else()
  message(WARNING "zlib not found: ridge_io will read plain IDX files only (apt-get install zlib1g-dev)")
endif()

# GPT-2's BPE tokenizer (src/io/bpe.c) splits text with a Unicode-aware pattern: PCRE2
# (libpcre2-dev). Without it, ridge_io still loads vocabularies and decodes, and encoding
# (`ridge tokenize`, `ridge generate --prompt`) fails with RIDGE_EUNSUPPORTED.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PCRE2 IMPORTED_TARGET libpcre2-8)
endif()
if(PCRE2_FOUND)
  set(RIDGE_HAVE_PCRE2 ON)
  target_compile_definitions(ridge_io PRIVATE RIDGE_HAVE_PCRE2=1)
  target_link_libraries(ridge_io PUBLIC PkgConfig::PCRE2)
else()
  set(RIDGE_HAVE_PCRE2 OFF)
  message(WARNING "PCRE2 not found: ridge can decode GPT-2 tokens but not encode text "
                  "(no `ridge tokenize`; apt-get install libpcre2-dev pkg-config)")
endif()
