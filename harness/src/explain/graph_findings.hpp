// The generic findings: patterns over the wait-for graph (graph_findings.cpp).
#pragma once

#include <vector>

#include "hangbench/findings.hpp"
#include "hangbench/wait_graph.hpp"

namespace hangbench::diagnose {

std::vector<Finding> graph_findings(const Snapshot& s, const WaitGraph& g);
// p2p-unmatched (graph_findings_p2p.cpp): a send or receive whose peer is not making the match.
std::vector<Finding> point_to_point_unmatched(const Snapshot& s);

}  // namespace hangbench::diagnose
