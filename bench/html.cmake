# The HTML report's benchmark: page size and render time in headless chromium
# for a 64-node run with 384 PUs per node (bench/html_report_benchmark.sh,
# docs/PERFORMANCE.md, section "HTML report"). Run: cmake --build BUILD --target bench_html_report
if(NOT TARGET stacksage_html_run)
  add_executable(stacksage_html_run ${STACKSAGE_SOURCE_DIR}/tests/browser/make_html_run.cpp)
  target_include_directories(stacksage_html_run PRIVATE ${STACKSAGE_SOURCE_DIR})
  target_link_libraries(stacksage_html_run PRIVATE PkgConfig::HWLOC fmt::fmt)
  target_compile_definitions(stacksage_html_run PRIVATE STACKSAGE_TEST_DATA_DIR="${STACKSAGE_TEST_DATA_DIR}")
  set_target_properties(stacksage_html_run PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/browser)
endif()
add_custom_target(bench_html_report
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/html_report_benchmark.sh ${CMAKE_BINARY_DIR}
  DEPENDS stacksage stacksage_html_run
  USES_TERMINAL
  COMMENT "HTML report: page size and render time in headless chromium (64 nodes x 384 PUs)")
