# The benchmark library: linked into the ridge CLI (`ridge bench <name>`).
find_package(OpenMP COMPONENTS C)
file(GLOB RIDGE_BENCH_SOURCES CONFIGURE_DEPENDS bench/*.c)
add_library(ridge_bench STATIC ${RIDGE_BENCH_SOURCES})
target_include_directories(ridge_bench PUBLIC bench ${RIDGE_GENERATED} PRIVATE src)
target_link_libraries(ridge_bench PUBLIC ridge_static)
if(OpenMP_C_FOUND)
  # OpenMP is a peer here, measured in bench-pool.c; the library itself never uses it.
  set_source_files_properties(bench/bench-pool.c PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS}")
  target_link_libraries(ridge_bench PUBLIC OpenMP::OpenMP_C)
  target_compile_definitions(ridge_bench PRIVATE RIDGE_HAVE_OPENMP=1)
endif()
