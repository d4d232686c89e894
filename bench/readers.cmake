# Our readers against the libraries (issue 19; docs/PERFORMANCE.md, section
# "Readers against the libraries"; driver: bench/readers_benchmark.sh).
# Optional: simdjson and libxml2 are needed by these benchmarks only; when
# one is missing its benchmark is skipped, nothing else depends on them.
find_package(simdjson CONFIG QUIET)
if(TARGET simdjson::simdjson)
  add_executable(bench_json_readers bench_json_readers.cpp)
  target_link_libraries(bench_json_readers PRIVATE stacksage_parsers stacksage_core simdjson::simdjson
                        nlohmann_json::nlohmann_json benchmark::benchmark)
else()
  message(STATUS "simdjson not found (libsimdjson-dev): bench_json_readers is not built")
endif()

find_package(LibXml2 QUIET)
if(TARGET LibXml2::LibXml2)
  add_executable(bench_xml_readers bench_xml_readers.cpp)
  target_link_libraries(bench_xml_readers PRIVATE stacksage_parsers stacksage_core LibXml2::LibXml2 benchmark::benchmark)
  target_compile_definitions(bench_xml_readers PRIVATE STACKSAGE_TEST_DATA_DIR="${STACKSAGE_TEST_DATA_DIR}")
else()
  message(STATUS "libxml2 not found (libxml2-dev): bench_xml_readers is not built")
endif()
