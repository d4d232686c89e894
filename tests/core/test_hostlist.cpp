// parse_hostlist: Slurm's compact host lists expanded, and broken ones
// refused with a message that says what is wrong.
#include <gtest/gtest.h>

#include "core/hostlist.hpp"

using namespace stacksage;
using Hosts = std::vector<std::string>;

namespace {
Hosts hosts(std::string_view list, std::size_t max = kMaxHostlistHosts) {
    auto r = parse_hostlist(list, max);
    EXPECT_TRUE(r) << list << ": " << (r ? "" : r.error().message);
    return r ? *r : Hosts{};
}
std::string error_of(std::string_view list, std::size_t max = kMaxHostlistHosts) {
    auto r = parse_hostlist(list, max);
    EXPECT_FALSE(r) << list;
    return r ? "" : r.error().message;
}
}  // namespace

TEST(Hostlist, PlainNames) {
    EXPECT_EQ(hosts("n01"), (Hosts{"n01"}));
    EXPECT_EQ(hosts("login1,n02.cluster"), (Hosts{"login1", "n02.cluster"}));
}

TEST(Hostlist, RangesKeepTheLowerBoundsPadding) {
    // Each range has its own width, as in Slurm (which writes n007 as "007").
    EXPECT_EQ(hosts("n[001-003,7]"), (Hosts{"n001", "n002", "n003", "n7"}));
    EXPECT_EQ(hosts("n[001-003,007]"), (Hosts{"n001", "n002", "n003", "n007"}));
    EXPECT_EQ(hosts("n[8-11]"), (Hosts{"n8", "n9", "n10", "n11"}));
    EXPECT_EQ(hosts("n[098-101]"), (Hosts{"n098", "n099", "n100", "n101"}));
}

TEST(Hostlist, ListsOfExpressionsWithSuffixesAndProducts) {
    EXPECT_EQ(hosts("n[001-003,7],gpu[1-2]-ib"), (Hosts{"n001", "n002", "n003", "n7", "gpu1-ib", "gpu2-ib"}));
    EXPECT_EQ(hosts("r[1-2]n[1-2]"), (Hosts{"r1n1", "r1n2", "r2n1", "r2n2"}));
    EXPECT_EQ(hosts("n[1-128,130]").size(), 129u);
}

TEST(Hostlist, BrokenListsSayWhatIsWrong) {
    EXPECT_NE(error_of("").find("it is empty"), std::string::npos);
    EXPECT_NE(error_of("n[1-3").find("never closed"), std::string::npos);
    EXPECT_NE(error_of("n1-3]").find("closes no bracket"), std::string::npos);
    EXPECT_NE(error_of("n[[1]]").find("do not nest"), std::string::npos);
    EXPECT_NE(error_of("n[3-1]").find("runs backwards"), std::string::npos);
    EXPECT_NE(error_of("n[a-b]").find("no digit"), std::string::npos);
    EXPECT_NE(error_of("n[]").find("holds no number"), std::string::npos);
    EXPECT_NE(error_of("n[1,]").find("number is missing"), std::string::npos);
    EXPECT_NE(error_of("n1,,n2").find("empty"), std::string::npos);
    EXPECT_NE(error_of("n1 n2").find("does not belong"), std::string::npos);
    // The message quotes the list and where it went wrong.
    EXPECT_NE(error_of("n[3-1]").find("host list \"n[3-1]\""), std::string::npos);
    EXPECT_NE(error_of("n[3-1]").find("character 3"), std::string::npos);
}

TEST(Hostlist, ExpansionIsBounded) {
    EXPECT_NE(error_of("n[0-999999999999999999]").find("more than"), std::string::npos);
    EXPECT_NE(error_of("a[0-999]b[0-999]c[0-999]").find("more than"), std::string::npos);
    EXPECT_EQ(hosts("n[1-4]", 4).size(), 4u);
    EXPECT_NE(error_of("n[1-4],m1", 4).find("more than 4 hosts"), std::string::npos);
    EXPECT_NE(error_of("n[1-3,5-6]", 4).find("more than 4 hosts"), std::string::npos);
    EXPECT_NE(error_of("n[1-1234567890123456789]").find("more than 18 digits"), std::string::npos);
}
