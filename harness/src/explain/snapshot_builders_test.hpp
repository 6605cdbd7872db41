// Snapshots built by hand for the graph and rule tests: a thread in a syscall (or running),
// a target process, its stack, and pipe and socket descriptors. Test code only.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose::snapshot_builders {

// A thread sleeping in `syscall` with its arguments; "running": on a CPU, in no syscall.
inline proc::ThreadInfo thread(int tid, std::string name, std::string syscall, std::vector<std::uint64_t> args = {}) {
  proc::ThreadInfo t;
  t.tid = tid;
  t.name = std::move(name);
  t.state = syscall == "running" ? 'R' : 'S';
  if (syscall == "running") {
    t.syscall.kind = proc::SyscallLine::Kind::Running;
  } else if (!syscall.empty()) {
    t.syscall.kind = proc::SyscallLine::Kind::InSyscall;
    t.syscall_name = syscall;
    t.syscall.args = std::move(args);
  }
  return t;
}

// A target process whose stacks were read; `world` > 0 sets WORLD_SIZE as a launcher would.
inline ProcessSnapshot process(int pid, int ppid, std::string comm, int rank = -1, int world = 0) {
  ProcessSnapshot p;
  p.info.pid = pid;
  p.info.ppid = ppid;
  p.info.comm = std::move(comm);
  p.info.state = 'S';
  p.target = true;
  p.rank = rank;
  if (world) p.environment["WORLD_SIZE"] = std::to_string(world);
  p.stacks.attempted = true;
  return p;
}

inline void stack(ProcessSnapshot& p, int tid, std::vector<std::string> functions) {
  StackThread t;
  t.tid = tid;
  t.functions = std::move(functions);
  p.stacks.threads.push_back(std::move(t));
}

inline proc::Descriptor pipe_fd(int fd, std::uint64_t inode) {
  return {fd, "pipe:[" + std::to_string(inode) + "]", {proc::DescriptorKind::Pipe, inode}, -1};
}

inline proc::Descriptor socket_fd(int fd, std::uint64_t inode) {
  return {fd, "socket:[" + std::to_string(inode) + "]", {proc::DescriptorKind::Socket, inode}, -1};
}

}  // namespace hangbench::diagnose::snapshot_builders
