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
  ${CMAKE_CURRENT_SOURCE_DIR}/src/io/mnist.c)
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
