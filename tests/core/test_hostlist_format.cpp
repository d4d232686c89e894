#include <gtest/gtest.h>

#include "core/hostlist_format.hpp"

using stacksage::format_hostlist;

TEST(HostlistFormat, EmptyAndSingleHosts) {
    EXPECT_EQ(format_hostlist({}), "");
    EXPECT_EQ(format_hostlist({"n01"}), "n01");
    EXPECT_EQ(format_hostlist({"login"}), "login");
}

TEST(HostlistFormat, ConsecutiveNumbersBecomeRangesSortedNumerically) {
    EXPECT_EQ(format_hostlist({"n3", "n1", "n2"}), "n[1-3]");
    EXPECT_EQ(format_hostlist({"n10", "n9", "n2", "n1"}), "n[1-2,9-10]");
    std::vector<std::string> hosts;
    for (int i = 1; i <= 130; ++i)
        if (i != 129) hosts.push_back((i < 10 ? "n00" : i < 100 ? "n0" : "n") + std::to_string(i));
    EXPECT_EQ(format_hostlist(hosts), "n[001-128,130]");
}

TEST(HostlistFormat, KeepsZeroPaddingAndDoesNotJoinDifferentWidths) {
    EXPECT_EQ(format_hostlist({"n08", "n09", "n10"}), "n[08-10]");
    EXPECT_EQ(format_hostlist({"n9", "n010"}), "n[9,010]");
    EXPECT_EQ(format_hostlist({"n1", "n01"}), "n[1,01]");
    EXPECT_EQ(format_hostlist({"n01", "n01", "n02"}), "n[01-02]");  // duplicates dropped
}

TEST(HostlistFormat, SeveralPrefixesAndSuffixes) {
    EXPECT_EQ(format_hostlist({"b7", "a2", "a1"}), "a[1-2],b7");
    EXPECT_EQ(format_hostlist({"rack1-n2", "rack1-n1", "rack2-n1"}), "rack1-n[1-2],rack2-n1");
    EXPECT_EQ(format_hostlist({"n01-ib", "n02-ib", "n03-ib", "n02"}), "n[01-03]-ib,n02");
    EXPECT_EQ(format_hostlist({"gpu4", "login", "gpu5", "cpu1"}), "cpu1,gpu[4-5],login");
}

TEST(HostlistFormat, NamesTheNotationCannotHoldStandAlone) {
    EXPECT_EQ(format_hostlist({"a,b1", "a,b2"}), "a,b1,a,b2");
    EXPECT_EQ(format_hostlist({"n12345678901234567890", "n12345678901234567891"}),
              "n12345678901234567890,n12345678901234567891");
}
