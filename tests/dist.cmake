# Data parallelism over MPI: only with -DRIDGE_WITH_MPI=ON (needs libopenmpi-dev, openmpi-bin).
# Every MPI run is `mpiexec -np 2 --oversubscribe --allow-run-as-root` on this one machine,
# each under a timeout (ctest's, and the script's own `timeout` per run).
if(RIDGE_WITH_MPI)
  add_executable(test-dist test-dist.c)
  target_include_directories(test-dist PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(test-dist PRIVATE ridge_dist)
  add_test(NAME test-dist COMMAND test-dist) # a world of one, without a launcher
  add_test(NAME test-dist-np2 COMMAND ${MPIEXEC_EXECUTABLE} -np 2 --oversubscribe
           --allow-run-as-root $<TARGET_FILE:test-dist>)
  set_tests_properties(test-dist test-dist-np2 PROPERTIES LABELS fast TIMEOUT 120)
  add_test(NAME cli-dist COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-dist.sh
           $<TARGET_FILE:ridge> ${MPIEXEC_EXECUTABLE})
  set_tests_properties(cli-dist PROPERTIES LABELS fast TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
