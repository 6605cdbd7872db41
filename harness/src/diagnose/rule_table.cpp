// The rule table: one function per known hang shape, in the order findings are listed.
#include "diagnose/rule_helpers.hpp"

namespace hangbench::evidence {

const std::vector<Rule>& rule_table() {
  static const std::vector<Rule> table = {
      {"nccl-descriptor-alias", "poller on a TCP connection whose other end only another (forked) process holds",
       rules::nccl_descriptor_alias},
      {"self-connection-aliased", "a self-connection with one end duplicated into another process",
       rules::nccl_alias_risk},
      {"mpi-gil", "Python + MPI: a GIL waiter while another thread blocks in native code", rules::mpi_gil},
      {"pipe-writer-held", "a reader blocked on a pipe whose write end is still held", rules::pipe_reader_blocked},
      {"stopped", "a process stopped by a signal or a tracer", rules::stopped_process},
      {"zombie", "an exited process its parent has not reaped", rules::unreaped_zombie},
  };
  return table;
}

std::vector<Finding> find_hang_shapes(const Snapshot& s) {
  std::vector<Finding> all;
  for (const auto& rule : rule_table()) {
    auto found = rule.match(s);
    for (auto& f : found)
      if (auto words = rules::python_terms(s, f.pids); !words.empty()) f.summary += " " + words;
    all.insert(all.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  }
  return all;
}

}  // namespace hangbench::evidence
