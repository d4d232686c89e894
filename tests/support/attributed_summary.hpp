// Code-and-data attribution of a known shape for the tests above the
// recorder (model, analysis, reports): a sampling summary's module, site and
// object records as the recorder writes them (sample_summary_schema), with
// this test program's real mappings and real return addresses of the
// functions below, so that they resolve after the "run", with libdwfl, to
// known functions and lines (the tests build with -g).
//
//   setup_mesh -> init_mesh     the serial first touch of the mesh
//   setup_mesh -> alloc_mesh    where the mesh was allocated
//   compute_mesh                where it is read
//
// Include it in one source file per test program (the functions are defined here).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "parsers/sample_summary.hpp"
#include "tests/support/this_process_modules.hpp"

extern "C" {
// Appends the return address into its caller.
__attribute__((noinline)) inline void stacksage_test_take_return_address(std::vector<std::uint64_t>* out) {
    out->push_back(reinterpret_cast<std::uint64_t>(__builtin_return_address(0)));
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void init_mesh(std::vector<std::uint64_t>* out) {
    stacksage_test_take_return_address(out);  // LINE:init_mesh
    out->push_back(reinterpret_cast<std::uint64_t>(__builtin_return_address(0)));
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void alloc_mesh(std::vector<std::uint64_t>* out) {
    stacksage_test_take_return_address(out);  // LINE:alloc_mesh
    out->push_back(reinterpret_cast<std::uint64_t>(__builtin_return_address(0)));
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void compute_mesh(std::vector<std::uint64_t>* out) {
    stacksage_test_take_return_address(out);  // LINE:compute_mesh
    out->push_back(reinterpret_cast<std::uint64_t>(__builtin_return_address(0)));
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void setup_mesh(std::vector<std::uint64_t>* first_touch, std::vector<std::uint64_t>* alloc) {
    alloc_mesh(alloc);  // LINE:setup_alloc
    init_mesh(first_touch);  // LINE:setup_init
    __asm__ volatile("" ::: "memory");
}
// The static data object of the shape.
double stacksage_test_mesh_table[512] = {1.0};  // in .data: file-backed
}

namespace stacksage::test {

// The line of this file marked "LINE:<name>".
inline int attributed_line(const std::string& name) {
    std::ifstream in(std::string(STACKSAGE_TEST_DATA_DIR) + "/../support/attributed_summary.hpp");
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
        if (line.find("LINE:" + name) != std::string::npos && line.find("LINE:" + name + "_") == std::string::npos)
            return n;
    return -1;
}

// Site and object ids of the shape.
enum : std::int64_t { kSiteInit = 0, kSiteAlloc = 1, kSiteCompute = 2 };
enum : std::int64_t { kObjectMesh = 0, kObjectTable = 1, kObjectStack = 2 };

// Adds the shape's modules, sites (kernel call chains: ip and return
// addresses), objects (the 80 MiB heap block allocated in alloc_mesh, the
// static stacksage_test_mesh_table, thread stack_tid's stack) and the
// attribution record to summary.
inline void add_known_shape(SampleSummary& summary, std::int64_t stack_tid) {
    summary.modules = this_process_modules();
    std::vector<std::uint64_t> first_touch, alloc, compute;
    setup_mesh(&first_touch, &alloc);
    compute_mesh(&compute);
    const auto site = [&](std::int64_t id, const std::vector<std::uint64_t>& chain) {
        SampledSite s;
        s.id = id;
        s.ip = chain[0] - 1;  // inside the call: the sampled instruction's line
        s.frames.assign(chain.begin() + 1, chain.end());
        s.unwind = "callchain";
        s.samples = 1;
        summary.sites.push_back(s);
    };
    site(kSiteInit, first_touch);
    site(kSiteAlloc, alloc);
    site(kSiteCompute, compute);
    SampledObject mesh;
    mesh.id = kObjectMesh;
    mesh.kind = "heap";
    mesh.site = kSiteAlloc;
    mesh.blocks = 1;
    mesh.bytes = std::uint64_t{80} << 20;
    summary.objects.push_back(mesh);
    const auto table = reinterpret_cast<std::uint64_t>(&stacksage_test_mesh_table[0]);
    SampledObject statics;
    statics.id = kObjectTable;
    statics.kind = "static";
    for (const SampledModule& m : summary.modules)
        if (table >= m.start && table < m.end) {
            statics.module = m.id;
            statics.offset = m.file_offset + (table - m.start);
        }
    summary.objects.push_back(statics);
    SampledObject stack;
    stack.id = kObjectStack;
    stack.kind = "stack";
    stack.tid = stack_tid;
    summary.objects.push_back(stack);
    summary.attribution.present = true;
    summary.attribution.sites = 3;
    summary.attribution.objects = 3;
    summary.attribution.min_block_bytes = 1 << 20;
    summary.attribution.allocations_tracked = 1;
}

}  // namespace stacksage::test
