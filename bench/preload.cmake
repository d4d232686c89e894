# Benchmarks of the preload (included by bench/CMakeLists.txt). Figures and
# the commands that produce them: docs/PERFORMANCE.md, section "Preload".
add_executable(bench_preload_create_cost preload_create_cost.cpp)
target_link_libraries(bench_preload_create_cost PRIVATE Threads::Threads ${CMAKE_DL_LIBS})

add_executable(bench_preload_run_overhead preload_run_overhead.cpp)
target_include_directories(bench_preload_run_overhead PRIVATE ${STACKSAGE_SOURCE_DIR})

add_executable(bench_preload_startup preload_startup.cpp)
target_include_directories(bench_preload_startup PRIVATE ${STACKSAGE_SOURCE_DIR})
target_link_libraries(bench_preload_startup PRIVATE stacksage_parsers nlohmann_json::nlohmann_json)

add_executable(bench_preload_ab_compare preload_ab_compare.cpp)
target_include_directories(bench_preload_ab_compare PRIVATE ${STACKSAGE_SOURCE_DIR})

# The recorder's own reader of the cgroups' CPU quota, timed in a loop.
add_executable(bench_preload_cgroup_quota_read preload_cgroup_quota_read.cpp)
target_link_libraries(bench_preload_cgroup_quota_read PRIVATE stacksage_preload_base)

foreach(b bench_preload_create_cost bench_preload_run_overhead bench_preload_startup bench_preload_ab_compare)
  add_dependencies(${b} stacksage-preload stacksage-model)
endforeach()

# One thread_start line formatted: the recorder's formatter against JsonLine's
# build of the same bytes (its test's oracle).
add_executable(bench_preload_thread_start_line preload_thread_start_line.cpp)
target_link_libraries(bench_preload_thread_start_line PRIVATE stacksage_preload_base)
