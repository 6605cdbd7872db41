// The phase protocol, workload side: a few lines any program can copy.
//
// The harness names a file in HANGBENCH_PHASE_FILE. A workload appends one JSON
// object per line, written with a single write() on an O_APPEND descriptor so
// that lines from several ranks or forked children never interleave:
//   {"phase":"init_done","t":1733131331.25,"pid":123,"rank":0}
//   {"metric":"tcp_state","value":"ESTABLISHED","t":...,"pid":123,"rank":0}
// "t" is CLOCK_REALTIME in seconds. Unknown keys are kept as metrics by the
// harness. Without the variable every call is a no-op, so a workload also
// runs on its own.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace hangbench::phase {

inline double now_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The rank as the launcher tells it (mpirun, srun, torchrun), or -1.
inline int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return -1;
}

inline std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

// Appends one raw JSON line (without the closing brace's pid/rank/t: added here).
inline void emit_raw(const std::string& body) {
  const char* path = std::getenv("HANGBENCH_PHASE_FILE");
  if (path == nullptr || *path == '\0') return;
  char tail[128];
  int rank = launcher_rank();
  std::snprintf(tail, sizeof tail, "\"t\":%.6f,\"pid\":%d,\"rank\":%d}\n", now_seconds(), static_cast<int>(getpid()),
                rank);
  // A launched rank (srun, torchrun, mpirun) may run on another node: say which.
  std::string host;
  if (rank >= 0) {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) host = "\"host\":\"" + json_escape(name) + "\",";
  }
  std::string line = "{" + body + (body.empty() ? "" : ",") + host + tail;
  int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
  ::close(fd);
}

// Marks the start of a phase: init_done, work_done, teardown_begin, teardown_end, or any name.
inline void mark(const std::string& name) { emit_raw("\"phase\":\"" + json_escape(name) + "\""); }

inline void metric(const std::string& name, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  emit_raw("\"metric\":\"" + json_escape(name) + "\",\"value\":" + buf);
}

inline void metric(const std::string& name, const std::string& value) {
  emit_raw("\"metric\":\"" + json_escape(name) + "\",\"value\":\"" + json_escape(value) + "\"");
}

}  // namespace hangbench::phase
