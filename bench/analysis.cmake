# The analyzer's benchmark: a generator of synthetic runs, timed through
# `stacksage report --format json` by analyzer_benchmark.sh (docs/PERFORMANCE.md,
# section "Analyzer").
add_executable(stacksage_synthetic_run synthetic_run_generator.cpp)
target_link_libraries(stacksage_synthetic_run PRIVATE PkgConfig::HWLOC fmt::fmt)
target_include_directories(stacksage_synthetic_run PRIVATE ${STACKSAGE_SOURCE_DIR})
