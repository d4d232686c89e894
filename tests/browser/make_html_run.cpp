// stacksage_html_run: writes the run directories the HTML report's browser
// test and benchmark load (tests/support/html_report_runs.hpp).
//
//   stacksage_html_run demo OUT                   the 160-PU demo run
//   stacksage_html_run large OUT NODES PUS RANKS  e.g. large OUT 64 384 8
//   stacksage_html_run cluster OUT                six small nodes, one over-subscribed (the node overview)
//   stacksage_html_run groups OUT NODES           many alike nodes and a few odd ones (one section per group)
#include <cstdlib>
#include <iostream>
#include <string>

#include "tests/support/html_report_runs.hpp"

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "demo" && argc == 3) {
        stacksage::testing::write_html_demo_run(argv[2]);
        return 0;
    }
    if (mode == "cluster" && argc == 3) {
        stacksage::testing::write_html_cluster_run(argv[2]);
        return 0;
    }
    if (mode == "groups" && argc == 4 && std::atoi(argv[3]) >= 30) {
        stacksage::testing::write_html_groups_run(argv[2], std::atoi(argv[3]));
        return 0;
    }
    if (mode == "large" && argc == 6) {
        const int nodes = std::atoi(argv[3]), pus = std::atoi(argv[4]), ranks = std::atoi(argv[5]);
        if (nodes > 0 && pus >= 4 && pus % 4 == 0 && ranks > 0 && pus % ranks == 0) {
            stacksage::testing::write_large_html_run(argv[2], nodes, pus, ranks);
            return 0;
        }
    }
    std::cerr << "usage: stacksage_html_run demo OUT | cluster OUT | groups OUT NODES (at least 30) | large OUT NODES PUS "
                 "RANKS (PUS a multiple of 4 and of RANKS)\n";
    return 2;
}
