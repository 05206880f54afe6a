# Data parallelism over MPI: only with -DRIDGE_WITH_MPI=ON (needs libopenmpi-dev, openmpi-bin).
# Every run uses `mpiexec -np 2 --oversubscribe --allow-run-as-root` on this one machine, each
# under a timeout (the script's own `timeout` per run, and ctest's).
if(RIDGE_WITH_MPI)
  add_test(NAME cli-dist COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli-dist.sh
           $<TARGET_FILE:ridge> ${MPIEXEC_EXECUTABLE})
  set_tests_properties(cli-dist PROPERTIES LABELS fast TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
