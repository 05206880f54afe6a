# ISA flags go on the files of that ISA only; the library itself is built for baseline x86-64
# and picks kernels at run time (docs/ARCHITECTURE.md, "ISA variants").
set(RIDGE_FLAGS_avx2   "-mavx2 -mfma -mf16c")
set(RIDGE_FLAGS_avx512 "-mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mavx2 -mf16c")
set(RIDGE_FLAGS_vnni   "${RIDGE_FLAGS_avx512} -mavx512vnni")
set(RIDGE_FLAGS_avxvnni "${RIDGE_FLAGS_avx2} -mavxvnni")
set(RIDGE_FLAGS_bf16   "${RIDGE_FLAGS_avx512} -mavx512bf16")

# ridge_add_sources(<isa|portable> file...): append files to the library, with the ISA's flags.
function(ridge_add_sources isa)
  set(files)
  foreach(f ${ARGN})
    set(p ${CMAKE_CURRENT_SOURCE_DIR}/${f})
    list(APPEND files ${p})
    if(NOT isa STREQUAL "portable")
      set_source_files_properties(${p} PROPERTIES COMPILE_FLAGS "${RIDGE_FLAGS_${isa}}")
    endif()
  endforeach()
  set(RIDGE_SOURCES ${RIDGE_SOURCES} ${files} PARENT_SCOPE)
endfunction()
