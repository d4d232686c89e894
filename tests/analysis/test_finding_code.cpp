// FindingCode: every code has its documented identifier, and the identifier
// gives the code back.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "analysis/finding_code.hpp"

using namespace stacksage;

TEST(FindingCode, EveryCodeRoundTripsThroughItsIdentifier) {
    std::set<std::string> seen;
    for (int i = 0; i <= static_cast<int>(kLastFindingCode); ++i) {
        const auto code = static_cast<FindingCode>(i);
        const std::string text(to_string(code));
        EXPECT_NE(text, "unknown") << i;
        EXPECT_TRUE(seen.insert(text).second) << "two codes share " << text;
        const auto back = finding_code_from_string(text);
        ASSERT_TRUE(back.has_value()) << text;
        EXPECT_EQ(*back, code) << text;
    }
    EXPECT_EQ(seen.size(), 21u);
}

TEST(FindingCode, IdentifiersAreTheStableStrings) {
    EXPECT_EQ(to_string(FindingCode::OverloadedResources), "overloaded-resources");
    EXPECT_EQ(to_string(FindingCode::SmtUnusedHardwareThreads), "smt-unused-hardware-threads");
    EXPECT_EQ(to_string(FindingCode::ThreadMigrations), "thread-migrations");
    EXPECT_EQ(to_string(FindingCode::IncompleteRecording), "incomplete-recording");
    EXPECT_EQ(to_string(FindingCode::AllocatedNodeUnused), "allocated-node-unused");
    EXPECT_EQ(to_string(FindingCode::CpuQuotaThrottled), "cpu-quota-throttled");
    EXPECT_EQ(to_string(FindingCode::LogEndsEarly), "log-ends-early");
    EXPECT_EQ(to_string(FindingCode::UntracedThreads), "untraced-threads");
    EXPECT_EQ(to_string(FindingCode::LiveWarning), "live-warning");
    EXPECT_EQ(to_string(FindingCode::NetworkSpread), "network-spread");
}

TEST(FindingCode, OtherTextIsNoCode) {
    EXPECT_FALSE(finding_code_from_string("").has_value());
    EXPECT_FALSE(finding_code_from_string("Overloaded-Resources").has_value());
    EXPECT_FALSE(finding_code_from_string("unknown").has_value());
}
