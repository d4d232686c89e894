# Benchmarks of the samplers (included by bench/CMakeLists.txt). Figures and
# the commands that produce them: docs/PERFORMANCE.md, section "Sampling".
add_executable(bench_sampling_decode sampling_decode.cpp)
target_link_libraries(bench_sampling_decode PRIVATE stacksage_sampling benchmark::benchmark)

add_executable(bench_sampling_overhead sampling_overhead.cpp)
target_include_directories(bench_sampling_overhead PRIVATE ${STACKSAGE_SOURCE_DIR})
target_link_libraries(bench_sampling_overhead PRIVATE stacksage_sampling Threads::Threads)

# The allocation interposers linked into the benchmark itself (an executable's
# malloc comes before glibc's, as the preload's does), with frame pointers
# as in the preload.
add_executable(bench_allocation_overhead allocation_overhead.cpp
  ${STACKSAGE_SOURCE_DIR}/preload/allocation_events.cpp ${STACKSAGE_SOURCE_DIR}/preload/next_allocator.cpp
  ${STACKSAGE_SOURCE_DIR}/preload/real_functions.cpp)
set_source_files_properties(${STACKSAGE_SOURCE_DIR}/preload/allocation_events.cpp
  TARGET_DIRECTORY bench_allocation_overhead PROPERTIES COMPILE_OPTIONS -fno-omit-frame-pointer)
target_include_directories(bench_allocation_overhead PRIVATE ${STACKSAGE_SOURCE_DIR})
target_link_libraries(bench_allocation_overhead PRIVATE stacksage_sampling ${CMAKE_DL_LIBS})

# Whole programs under the real preload: untraced, traced without sampling,
# sampled, sampled with attribution.
add_executable(bench_sampling_run_overhead sampling_run_overhead.cpp)
target_include_directories(bench_sampling_run_overhead PRIVATE ${STACKSAGE_SOURCE_DIR})
add_dependencies(bench_sampling_run_overhead stacksage-preload stacksage-model)
