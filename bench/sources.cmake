# The benchmark library: linked into the ridge CLI (`ridge bench <name>`).
find_package(OpenMP COMPONENTS C)
file(GLOB RIDGE_BENCH_SOURCES CONFIGURE_DEPENDS bench/*.c)
add_library(ridge_bench STATIC ${RIDGE_BENCH_SOURCES})
# the plain loops `ridge bench vec` compares against start on 64-byte boundaries, as the vec
# kernels do (src/vec/sources.cmake), so that no build moves one side against the other
set_property(SOURCE bench/vec-plain.c APPEND PROPERTY COMPILE_OPTIONS -falign-functions=64)
target_include_directories(ridge_bench PUBLIC bench ${RIDGE_GENERATED} PRIVATE src)
target_link_libraries(ridge_bench PUBLIC ridge_static)
if(OpenMP_C_FOUND)
  # OpenMP is a peer here, measured in bench-pool.c; the library itself never uses it.
  set_source_files_properties(bench/bench-pool.c bench/omp-spread.c PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS}")
  target_link_libraries(ridge_bench PUBLIC OpenMP::OpenMP_C)
  target_compile_definitions(ridge_bench PRIVATE RIDGE_HAVE_OPENMP=1)
endif()

# Peers for bench-gemm.c: found here, opened at run time with dlopen(RTLD_LOCAL) from these
# paths (OpenBLAS and BLIS export the same BLAS symbols; OpenBLAS must also be loaded after the
# benchmark unsets OPENBLAS_CORETYPE). Nothing is linked into the library.
if(RIDGE_BENCH_PEERS)
  find_library(RIDGE_OPENBLAS_LIB NAMES openblas)
  find_library(RIDGE_BLIS_LIB NAMES blis)
  find_library(RIDGE_DNNL_LIB NAMES dnnl)
  set(gemm_peer_defs RIDGE_HAVE_PEERS=1)
  foreach(p OPENBLAS BLIS DNNL)
    if(RIDGE_${p}_LIB)
      list(APPEND gemm_peer_defs RIDGE_PEER_${p}="${RIDGE_${p}_LIB}")
      message(STATUS "bench gemm peer ${p}: ${RIDGE_${p}_LIB}")
    endif()
  endforeach()
  set_property(SOURCE bench/bench-gemm.c bench/bench-dense.c bench/bench-lowp.c APPEND PROPERTY COMPILE_DEFINITIONS ${gemm_peer_defs})
  target_link_libraries(ridge_bench PUBLIC ${CMAKE_DL_LIBS})
endif()

# oneDNN as the convolution peer (bench-conv.c, bench-convbwd.c, bench-layout.c): linked, as its primitives are built through
# the C API; OpenMP sets its thread count per primitive.
if(RIDGE_BENCH_PEERS AND RIDGE_DNNL_LIB AND OpenMP_C_FOUND)
  find_path(RIDGE_DNNL_INCLUDE oneapi/dnnl/dnnl.h)
  if(RIDGE_DNNL_INCLUDE)
    set_property(SOURCE bench/bench-conv.c bench/bench-convbwd.c bench/bench-layout.c APPEND PROPERTY COMPILE_DEFINITIONS RIDGE_HAVE_DNNL=1)
    set_property(SOURCE bench/bench-conv.c bench/bench-convbwd.c bench/bench-layout.c APPEND PROPERTY COMPILE_OPTIONS ${OpenMP_C_FLAGS})
    target_link_libraries(ridge_bench PUBLIC ${RIDGE_DNNL_LIB})
  endif()
endif()
