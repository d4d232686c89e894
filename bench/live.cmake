# The live watcher's overhead on a real job (included by bench/CMakeLists.txt).
# Figures and the command: docs/PERFORMANCE.md, section "Live warnings".
add_executable(bench_live_watcher_overhead live_watcher_overhead.cpp)
target_include_directories(bench_live_watcher_overhead PRIVATE ${STACKSAGE_SOURCE_DIR})
target_compile_definitions(bench_live_watcher_overhead PRIVATE STACKSAGE_CLI="$<TARGET_FILE:stacksage>")
add_dependencies(bench_live_watcher_overhead stacksage stacksage-preload stacksage-model)
