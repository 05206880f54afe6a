# src/dist: data-parallel training over MPI. Built only with -DRIDGE_WITH_MPI=ON, as its own
# library ridge_dist (like ridge_io), so that libridge never depends on MPI. The CLI links it
# and then compiles with RIDGE_HAVE_MPI=1 (tools/ridge/dist-cli.h).
if(RIDGE_WITH_MPI)
  find_package(MPI REQUIRED COMPONENTS C)
  add_library(ridge_dist STATIC ${CMAKE_CURRENT_SOURCE_DIR}/src/dist/dist.c)
  target_include_directories(ridge_dist
    PUBLIC  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(ridge_dist PUBLIC ridge_static MPI::MPI_C)
endif()
if(RIDGE_WITH_MPI AND RIDGE_BUILD_BENCH)
  # the allreduce timings behind docs/PERFORMANCE.md ## mpi (not a `ridge bench`: it needs MPI)
  add_executable(ridge-mpi-allreduce ${CMAKE_CURRENT_SOURCE_DIR}/bench/mpi/allreduce.c)
  target_link_libraries(ridge-mpi-allreduce PRIVATE MPI::MPI_C)
endif()
