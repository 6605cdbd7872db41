// Reads back the JSON form of a snapshot (snapshot_json.cpp), so that stored
// evidence can be judged again by today's rules.
#include <fstream>
#include <stdexcept>

#include "hangbench/nccl_library.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

namespace {

using Json = nlohmann::json;

template <typename T>
T field(const Json& j, const char* key, T fallback = T{}) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<T>();
}

char state_char(const Json& j) {
  auto s = field<std::string>(j, "state");
  return s.empty() ? '?' : s[0];
}

proc::DescriptorKind kind_from_name(const std::string& name) {
  for (auto k : {proc::DescriptorKind::Socket, proc::DescriptorKind::Pipe, proc::DescriptorKind::AnonInode,
                 proc::DescriptorKind::File}) {
    if (proc::to_string(k) == name) return k;
  }
  return proc::DescriptorKind::Other;
}

proc::SocketEntry socket_from(const Json& j) {
  return {field<std::string>(j, "protocol"), field<std::string>(j, "local"),   field<std::string>(j, "remote"),
          field<std::string>(j, "state"),    field<std::uint64_t>(j, "inode"), field<std::string>(j, "unix_type")};
}

std::vector<Holder> holders_from(const Json& j) {
  std::vector<Holder> out;
  for (const auto& h : j) out.push_back({field<int>(h, "pid"), field<int>(h, "fd"), -1});
  return out;
}

proc::ThreadInfo thread_from(const Json& j) {
  proc::ThreadInfo t;
  t.tid = field<int>(j, "tid");
  t.name = field<std::string>(j, "name");
  t.state = state_char(j);
  t.wchan = field<std::string>(j, "wchan");
  const Json& sc = j.value("syscall", Json());
  if (sc.is_object()) {
    t.syscall.kind = proc::SyscallLine::Kind::InSyscall;
    t.syscall.number = field<long>(sc, "number", -1);
    t.syscall.args = field<std::vector<std::uint64_t>>(sc, "args");
    t.syscall_name = field<std::string>(sc, "name");
  } else if (sc.is_string()) {
    const auto s = sc.get<std::string>();
    t.syscall.kind = s == "running"          ? proc::SyscallLine::Kind::Running
                     : s == "not-in-syscall" ? proc::SyscallLine::Kind::NotInSyscall
                                             : proc::SyscallLine::Kind::Unknown;
  }
  t.kernel_stack = field<std::vector<std::string>>(j, "kernel_stack");
  t.polled_fds = field<std::vector<int>>(j, "polled_fds");
  t.futex_word = field<std::int64_t>(j, "futex_word", -1);
  t.futex_owner = field<std::int64_t>(j, "futex_owner", -1);
  t.switches = field<std::int64_t>(j, "switches", -1);
  t.seen_asleep = field<bool>(j, "seen_asleep", false);
  t.sleep_left_s = field<double>(j, "sleep_left_s", -1);
  t.switches_later = field<std::int64_t>(j, "switches_later", -1);
  return t;
}

ProcessSnapshot process_from(const Json& j) {
  ProcessSnapshot p;
  p.info.pid = field<int>(j, "pid");
  p.info.ppid = field<int>(j, "ppid");
  p.info.pgid = field<int>(j, "pgid");
  p.info.sid = field<int>(j, "sid");
  p.info.comm = field<std::string>(j, "comm");
  p.info.state = state_char(j);
  p.info.cmdline = field<std::vector<std::string>>(j, "cmdline");
  p.info.start_unix = field<double>(j, "start_unix");
  p.info.uid = field<int>(j, "uid", -1);
  p.info.net_namespace = field<std::string>(j, "net_namespace");
  p.target = field<bool>(j, "target");
  p.rank = j.value("rank", -1);
  p.environment = field<std::map<std::string, std::string>>(j, "environment");
  p.libraries = field<std::vector<std::string>>(j, "libraries");
  for (const auto& t : j.value("threads", Json::array())) p.threads.push_back(thread_from(t));
  for (const auto& d : j.value("descriptors", Json::array())) {
    proc::Descriptor desc;
    desc.fd = field<int>(d, "fd");
    desc.link = field<std::string>(d, "link");
    desc.target = {kind_from_name(field<std::string>(d, "kind")), field<std::uint64_t>(d, "inode")};
    desc.flags = field<int>(d, "flags", -1);
    p.descriptors.push_back(std::move(desc));
  }
  if (auto st = j.find("stacks"); st != j.end() && st->is_object()) {
    p.stacks.attempted = true;
    p.stacks.debugger = field<std::string>(*st, "debugger");
    p.stacks.skipped_reason = field<std::string>(*st, "skipped_reason");
    p.stacks.timed_out = field<bool>(*st, "timed_out");
    p.stacks.seconds = st->value("seconds", 0.0);
    if (auto phases = st->find("phase_seconds"); phases != st->end() && phases->is_object())
      for (const auto& [phase, seconds] : phases->items())
        if (seconds.is_number()) p.stacks.phase_seconds[phase] = seconds.get<double>();
    for (const auto& t : st->value("threads", Json::array())) {
      StackThread thread{
          field<int>(t, "tid"), field<std::string>(t, "name"), field<std::vector<std::string>>(t, "functions"), {}};
      for (const auto& f : t.value("frames", Json::array())) {
        StackFrame frame;
        frame.function = field<std::string>(f, "function");
        frame.pc = std::stoull(f.value("pc", std::string("0")), nullptr, 16);
        frame.module = f.value("module", "");
        frame.file = f.value("file", "");
        frame.line = f.value("line", 0);
        frame.inlined = f.value("inlined", false);
        frame.python = f.value("python", false);
        thread.frames.push_back(std::move(frame));
      }
      p.stacks.threads.push_back(std::move(thread));
    }
  }
  if (auto py = j.find("python"); py != j.end() && py->is_object()) {
    p.python.attempted = true;
    p.python.version = py->value("version", "");
    p.python.skipped_reason = py->value("skipped_reason", "");
    p.python.gil_holder_tid = py->value("gil_holder_tid", 0);
    for (const auto& t : py->value("threads", Json::array())) {
      PythonThread thread;
      thread.tid = field<int>(t, "tid");
      thread.holds_gil = t.value("holds_gil", false);
      thread.name = t.value("name", "");
      for (const auto& f : t.value("frames", Json::array()))
        thread.frames.push_back(
            {field<std::string>(f, "function"), f.value("file", ""), f.value("line", 0), f.value("entry", false)});
      p.python.threads.push_back(std::move(thread));
    }
  }
  if (auto fr = j.find("flight_recorder"); fr != j.end() && fr->is_object()) {
    p.flight_recorder.attempted = true;
    p.flight_recorder.skipped_reason = fr->value("skipped_reason", "");
    p.flight_recorder.pipe = fr->value("pipe", "");
    p.flight_recorder.file = fr->value("file", "");
    p.flight_recorder.fresh = fr->value("fresh", false);
    p.flight_recorder.summary = fr->value("summary", nlohmann::json(nullptr));
  }
  return p;
}

}  // namespace

Snapshot snapshot_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("processes") || !j["processes"].is_array()) {
    throw std::invalid_argument("not a hangbench evidence snapshot (no \"processes\" array)");
  }
  try {
    Snapshot s;
    s.captured_at = field<double>(j, "captured_at");
    s.host = field<std::string>(j, "host");
    s.target_pids = field<std::vector<int>>(j, "target_pids");
    s.notes = field<std::vector<std::string>>(j, "notes");
    s.read_seconds = field<double>(j, "read_seconds");
    const Json ancestors = j.value("ancestor_parents", Json::object());  // a local: items() refers into it
    for (const auto& [pid, parent] : ancestors.items()) s.ancestor_parents[std::stoi(pid)] = parent.get<int>();
    for (const auto& p : j["processes"]) s.processes.push_back(process_from(p));
    for (const auto& c : j.value("connections", Json::array())) {
      Connection conn;
      conn.end_a = socket_from(c.at("end_a"));
      conn.holders_a = holders_from(c.value("holders_a", Json::array()));
      if (c.contains("end_b")) {
        conn.end_b = socket_from(c["end_b"]);
        conn.holders_b = holders_from(c.value("holders_b", Json::array()));
      }
      s.connections.push_back(std::move(conn));
    }
    for (const auto& l : j.value("nccl_libraries", Json::array())) {
      NcclLibraryFacts facts;
      facts.path = l.value("path", "");
      facts.inspected = true;
      facts.version = l.value("version", "");
      facts.calls_shutdown = l.value("calls_shutdown", "unknown");
      facts.sha256 = l.value("sha256", "");
      facts.sentence = l.value("sentence", "");
      if (!facts.path.empty()) remember_nccl_library(facts);
    }
    for (const auto& u : j.value("pipes", Json::array()))
      s.pipes.push_back({field<std::uint64_t>(u, "inode"), holders_from(u.value("readers", Json::array())),
                         holders_from(u.value("writers", Json::array()))});
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed evidence snapshot: ") + e.what());
  }
}

Snapshot read_snapshot_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read " + path);
  try {
    return snapshot_from_json(nlohmann::json::parse(in));
  } catch (const std::exception& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
}

}  // namespace hangbench::diagnose
