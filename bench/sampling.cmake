# Benchmarks of the samplers (included by bench/CMakeLists.txt). Figures and
# the commands that produce them: docs/PERFORMANCE.md, section "Sampling".
add_executable(bench_sampling_decode sampling_decode.cpp)
target_link_libraries(bench_sampling_decode PRIVATE stacksage_sampling benchmark::benchmark)

add_executable(bench_sampling_overhead sampling_overhead.cpp)
target_link_libraries(bench_sampling_overhead PRIVATE stacksage_sampling Threads::Threads)
