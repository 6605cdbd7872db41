// The generic findings: patterns over the wait-for graph (graph_findings.cpp).
#pragma once

#include <vector>

#include "hangbench/diagnose.hpp"
#include "hangbench/wait_graph.hpp"

namespace hangbench::diagnose {

std::vector<Finding> graph_findings(const Snapshot& s, const WaitGraph& g);

}  // namespace hangbench::diagnose
