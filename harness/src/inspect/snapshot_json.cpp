// The JSON form of a snapshot (schema: docs/evidence.md).
#include <fmt/format.h>

#include "hangbench/nccl_library.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

namespace {

nlohmann::json socket_json(const proc::SocketEntry& e) {
  nlohmann::json j = {
      {"protocol", e.protocol}, {"local", e.local}, {"remote", e.remote}, {"state", e.state}, {"inode", e.inode}};
  if (!e.unix_type.empty()) j["unix_type"] = e.unix_type;
  return j;
}

nlohmann::json holders_json(const std::vector<Holder>& hs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& h : hs) a.push_back({{"pid", h.pid}, {"fd", h.fd}});
  return a;
}

nlohmann::json frame_json(const StackFrame& f) {
  nlohmann::json j = {{"function", f.function}};
  if (f.pc) j["pc"] = fmt::format("0x{:x}", f.pc);
  if (!f.module.empty()) j["module"] = f.module;
  if (!f.file.empty()) j["file"] = f.file;
  if (f.line) j["line"] = f.line;
  if (f.inlined) j["inlined"] = true;
  if (f.python) j["python"] = true;
  return j;
}

nlohmann::json process_json(const ProcessSnapshot& p) {
  nlohmann::json j = {{"pid", p.info.pid},         {"ppid", p.info.ppid},
                      {"pgid", p.info.pgid},       {"sid", p.info.sid},
                      {"comm", p.info.comm},       {"state", std::string(1, p.info.state)},
                      {"cmdline", p.info.cmdline}, {"start_unix", p.info.start_unix},
                      {"uid", p.info.uid},         {"target", p.target},
                      {"libraries", p.libraries},  {"net_namespace", p.info.net_namespace}};
  if (p.rank >= 0) j["rank"] = p.rank;
  if (!p.environment.empty()) j["environment"] = p.environment;
  j["threads"] = nlohmann::json::array();
  for (const auto& t : p.threads) {
    nlohmann::json tj = {{"tid", t.tid}, {"name", t.name}, {"state", std::string(1, t.state)}, {"wchan", t.wchan}};
    if (std::string python = python_thread_name(p, t.tid); !python.empty()) tj["python_name"] = python;
    if (t.syscall.kind == proc::SyscallLine::Kind::InSyscall) {
      tj["syscall"] = {{"number", t.syscall.number}, {"name", t.syscall_name}, {"args", t.syscall.args}};
    } else {
      tj["syscall"] = t.syscall.kind == proc::SyscallLine::Kind::Running        ? "running"
                      : t.syscall.kind == proc::SyscallLine::Kind::NotInSyscall ? "not-in-syscall"
                                                                                : "unknown";
    }
    if (!t.kernel_stack.empty()) tj["kernel_stack"] = t.kernel_stack;
    if (!t.polled_fds.empty()) tj["polled_fds"] = t.polled_fds;
    if (t.futex_word >= 0) tj["futex_word"] = t.futex_word;
    if (t.futex_owner >= 0) tj["futex_owner"] = t.futex_owner;
    if (t.switches >= 0) tj["switches"] = t.switches;
    if (t.seen_asleep) tj["seen_asleep"] = true;
    if (t.sleep_left_s >= 0) tj["sleep_left_s"] = t.sleep_left_s;
    if (t.switches_later >= 0) tj["switches_later"] = t.switches_later;
    j["threads"].push_back(std::move(tj));
  }
  j["descriptors"] = nlohmann::json::array();
  for (const auto& d : p.descriptors) {
    nlohmann::json dj = {{"fd", d.fd}, {"link", d.link}, {"kind", proc::to_string(d.target.kind)}};
    if (d.target.inode) dj["inode"] = d.target.inode;
    if (d.flags >= 0) dj["flags"] = d.flags;
    j["descriptors"].push_back(std::move(dj));
  }
  if (p.stacks.attempted) {
    nlohmann::json sj = {{"debugger", p.stacks.debugger},
                         {"skipped_reason", p.stacks.skipped_reason},
                         {"timed_out", p.stacks.timed_out}};
    sj["seconds"] = p.stacks.seconds;
    if (!p.stacks.phase_seconds.empty()) sj["phase_seconds"] = p.stacks.phase_seconds;
    sj["threads"] = nlohmann::json::array();
    for (const auto& t : p.stacks.threads) {
      nlohmann::json tj = {{"tid", t.tid}, {"name", t.name}, {"functions", t.functions}};
      if (!t.frames.empty()) {
        tj["frames"] = nlohmann::json::array();
        for (const auto& f : t.frames) tj["frames"].push_back(frame_json(f));
      }
      sj["threads"].push_back(std::move(tj));
    }
    j["stacks"] = std::move(sj);
  }
  if (p.python.attempted) {
    nlohmann::json pj = {{"version", p.python.version},
                         {"skipped_reason", p.python.skipped_reason},
                         {"gil_holder_tid", p.python.gil_holder_tid}};
    pj["threads"] = nlohmann::json::array();
    for (const auto& t : p.python.threads) {
      nlohmann::json frames = nlohmann::json::array();
      for (const auto& f : t.frames)
        frames.push_back({{"function", f.function}, {"file", f.file}, {"line", f.line}, {"entry", f.entry}});
      nlohmann::json tj = {{"tid", t.tid}, {"holds_gil", t.holds_gil}, {"frames", std::move(frames)}};
      if (!t.name.empty()) tj["name"] = t.name;
      pj["threads"].push_back(std::move(tj));
    }
    j["python"] = std::move(pj);
  }
  if (p.flight_recorder.attempted)
    j["flight_recorder"] = {{"skipped_reason", p.flight_recorder.skipped_reason},
                            {"pipe", p.flight_recorder.pipe},
                            {"file", p.flight_recorder.file},
                            {"fresh", p.flight_recorder.fresh},
                            {"summary", p.flight_recorder.summary}};
  return j;
}

}  // namespace

nlohmann::json to_json(const Snapshot& s) {
  nlohmann::json j = {{"schema", "hangbench.evidence/1"},
                      {"captured_at", s.captured_at},
                      {"host", s.host},
                      {"target_pids", s.target_pids},
                      {"notes", s.notes},
                      {"read_seconds", s.read_seconds}};
  // JSON keys are strings: {"812": 1} says pid 812's parent is pid 1.
  j["ancestor_parents"] = nlohmann::json::object();
  for (const auto& [pid, parent] : s.ancestor_parents) j["ancestor_parents"][std::to_string(pid)] = parent;
  j["processes"] = nlohmann::json::array();
  for (const auto& p : s.processes) j["processes"].push_back(process_json(p));
  j["connections"] = nlohmann::json::array();
  for (const auto& c : s.connections) {
    nlohmann::json cj = {{"end_a", socket_json(c.end_a)}, {"holders_a", holders_json(c.holders_a)}};
    if (c.end_b) {
      cj["end_b"] = socket_json(*c.end_b);
      cj["holders_b"] = holders_json(c.holders_b);
    }
    j["connections"].push_back(std::move(cj));
  }
  // What each NCCL library was, read here: a machine that judges this evidence again
  // may not have the file (snapshot_from_json gives these back to describe_nccl_library).
  j["nccl_libraries"] = nlohmann::json::array();
  for (const auto& path : nccl_libraries_mapped(s)) {
    const auto facts = describe_nccl_library(path);
    if (!facts.inspected) continue;
    j["nccl_libraries"].push_back({{"path", facts.path},
                                   {"version", facts.version},
                                   {"calls_shutdown", facts.calls_shutdown},
                                   {"sha256", facts.sha256},
                                   {"sentence", facts.sentence}});
  }
  j["pipes"] = nlohmann::json::array();
  for (const auto& u : s.pipes)
    j["pipes"].push_back(
        {{"inode", u.inode}, {"readers", holders_json(u.readers)}, {"writers", holders_json(u.writers)}});
  return j;
}

}  // namespace hangbench::diagnose
