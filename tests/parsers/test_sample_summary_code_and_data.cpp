// The sampling summary's code-and-data records (docs/sample-file.md, "Code
// and data"): module, site, object and attribution, and the site and object
// of access records, read into the SampleSummary structs; lines as a real
// run writes them (preload/sampling/summary_writer.cpp).
#include <gtest/gtest.h>

#include <string>

#include "parsers/sample_summary.hpp"

namespace stacksage {
namespace {

const std::string kHeader =
    R"({"v":1,"rec":"sampling","pid":4711,"host":"vm","start_ns":1,"end_ns":2,"requested":["pagefault"],"used":["pagefault"],"ring_pages":17,"max_rings":64,"periods":{"pebs":2003,"ibs":65536,"pagefault":64,"cpuclock_ns":1000000},"ldlat":30,"raw_file":null,"unsampled_threads":0})"
    "\n";

const std::string kCodeAndData =
    R"({"v":1,"rec":"access","tid":4711,"backend":"pagefault","cpu":0,"level":"unknown","op":"unknown","node":0,"remote":false,"hops":0,"missed":false,"count":111,"weight_sum":0,"weight_max":0,"latency_histogram":[111,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"site":7950,"object":1286})"
    "\n"
    R"({"v":1,"rec":"access","tid":4711,"backend":"pagefault","cpu":0,"level":"unknown","op":"unknown","node":0,"remote":false,"hops":0,"missed":false,"count":3,"weight_sum":0,"weight_max":0,"latency_histogram":[3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]})"
    "\n"
    R"({"v":1,"rec":"module","id":1,"path":"/usr/bin/prog","start":94497489588224,"end":94497489592320,"file_offset":4096,"build_id":"c1d8271613c750d86aadb4bea9c17efd1360a59c","kind":"file","executable":true})"
    "\n"
    R"({"v":1,"rec":"module","id":41,"path":"[vdso]","start":140376243769344,"end":140376243777536,"file_offset":0,"build_id":"","kind":"vdso","executable":true})"
    "\n"
    R"({"v":1,"rec":"site","id":7950,"ip":94497489589056,"frames":[94497489588593,140376237429322],"unwind":"callchain","samples":111})"
    "\n"
    R"({"v":1,"rec":"site","id":3886,"ip":93947293262656,"frames":[],"unwind":"stack","samples":128,"regs":{"ip":93947293262656,"sp":140730329949400,"bp":140076702765072},"stack":"76e10acf715500ff"})"
    "\n"
    R"({"v":1,"rec":"site","id":12,"ip":1,"frames":[],"unwind":"stack","samples":1,"regs":{"ip":1,"sp":2,"bp":3},"stack":"7z"})"
    "\n"
    R"({"v":1,"rec":"object","id":1286,"kind":"heap","blocks":1,"bytes":33554432,"site":1369})"
    "\n"
    R"({"v":1,"rec":"object","id":7,"kind":"static","blocks":0,"bytes":0,"module":5,"offset":6520832})"
    "\n"
    R"({"v":1,"rec":"object","id":8,"kind":"stack","blocks":0,"bytes":0,"tid":4712,"a_newer_field":true})"
    "\n"
    R"({"v":1,"rec":"object","id":1027,"kind":"unknown","blocks":0,"bytes":0})"
    "\n"
    R"({"v":1,"rec":"attribution","sites":3,"sites_dropped":4,"stacks":2,"stacks_dropped":5,"objects":34,"objects_dropped":6,"min_block_bytes":1048576,"allocations_tracked":7})"
    "\n";

TEST(SampleSummaryCodeAndData, ReadsModulesSitesObjectsAndAttribution) {
    auto s = parse_sample_summary(kHeader + kCodeAndData + R"({"v":1,"rec":"end","threads":1})" "\n", "x.samples");
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_EQ(s->accesses.size(), 2u);
    EXPECT_EQ(s->accesses[0].site, 7950);
    EXPECT_EQ(s->accesses[0].object, 1286);
    EXPECT_EQ(s->accesses[1].site, -1) << "absent: not known";
    EXPECT_EQ(s->accesses[1].object, -1);

    ASSERT_EQ(s->modules.size(), 2u);
    const SampledModule& m = s->modules[0];
    EXPECT_EQ(m.id, 1);
    EXPECT_EQ(m.path, "/usr/bin/prog");
    EXPECT_EQ(m.start, 94497489588224u);
    EXPECT_EQ(m.end, 94497489592320u);
    EXPECT_EQ(m.file_offset, 4096u);
    EXPECT_EQ(m.build_id, "c1d8271613c750d86aadb4bea9c17efd1360a59c");
    EXPECT_EQ(m.kind, "file");
    EXPECT_TRUE(m.executable);
    EXPECT_EQ(s->modules[1].kind, "vdso");

    ASSERT_EQ(s->sites.size(), 3u);
    const SampledSite& fp = s->sites[0];
    EXPECT_EQ(fp.id, 7950);
    EXPECT_EQ(fp.ip, 94497489589056u);
    ASSERT_EQ(fp.frames.size(), 2u);
    EXPECT_EQ(fp.frames[1], 140376237429322u);
    EXPECT_EQ(fp.unwind, "callchain");
    EXPECT_EQ(fp.samples, 111u);
    EXPECT_TRUE(fp.stack.empty());
    const SampledSite& copied = s->sites[1];
    EXPECT_EQ(copied.unwind, "stack");
    EXPECT_EQ(copied.reg_ip, 93947293262656u);
    EXPECT_EQ(copied.reg_sp, 140730329949400u);
    EXPECT_EQ(copied.reg_bp, 140076702765072u);
    ASSERT_EQ(copied.stack.size(), 8u);
    EXPECT_EQ(copied.stack[0], 0x76);
    EXPECT_EQ(copied.stack[7], 0xff);
    EXPECT_TRUE(s->sites[2].stack.empty()) << "not hex: no stack rather than a wrong one";

    ASSERT_EQ(s->objects.size(), 4u);
    EXPECT_EQ(s->objects[0].kind, "heap");
    EXPECT_EQ(s->objects[0].site, 1369);
    EXPECT_EQ(s->objects[0].blocks, 1u);
    EXPECT_EQ(s->objects[0].bytes, 33554432u);
    EXPECT_EQ(s->objects[1].kind, "static");
    EXPECT_EQ(s->objects[1].module, 5);
    EXPECT_EQ(s->objects[1].offset, 6520832u);
    EXPECT_EQ(s->objects[1].site, -1);
    EXPECT_EQ(s->objects[2].kind, "stack");
    EXPECT_EQ(s->objects[2].tid, 4712) << "an unknown field is skipped";
    EXPECT_EQ(s->objects[3].kind, "unknown");

    const SampledAttribution& a = s->attribution;
    EXPECT_TRUE(a.present);
    EXPECT_EQ(a.sites, 3u);
    EXPECT_EQ(a.sites_dropped, 4u);
    EXPECT_EQ(a.stacks, 2u);
    EXPECT_EQ(a.stacks_dropped, 5u);
    EXPECT_EQ(a.objects, 34u);
    EXPECT_EQ(a.objects_dropped, 6u);
    EXPECT_EQ(a.min_block_bytes, 1048576u);
    EXPECT_EQ(a.allocations_tracked, 7u);
    EXPECT_TRUE(s->complete);
}

TEST(SampleSummaryCodeAndData, ASummaryWithoutThemAndATornSite) {
    auto plain = parse_sample_summary(kHeader + R"({"v":1,"rec":"end","threads":0})" "\n", "x.samples");
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    EXPECT_FALSE(plain->attribution.present) << "attribution off, or an older recorder";
    EXPECT_TRUE(plain->sites.empty());

    // A run cut short while writing a site's stack copy.
    auto torn = parse_sample_summary(kHeader + R"({"v":1,"rec":"site","id":1,"ip":2,"frames":[],"unwind":"stack","samples":1,"stack":"00ff)",
                                     "x.samples");
    ASSERT_TRUE(torn.ok()) << torn.error().message;
    EXPECT_TRUE(torn->torn_last_line);
    EXPECT_TRUE(torn->sites.empty());
}

}  // namespace
}  // namespace stacksage
