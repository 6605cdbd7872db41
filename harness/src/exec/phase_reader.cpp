#include "exec/phase_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

namespace hangbench::exec_detail {

std::string phase_line_out_of_bounds(std::string_view line) {
  if (line.size() > kMaxPhaseLineBytes) {
    return "longer than " + std::to_string(kMaxPhaseLineBytes / 1024) + " KiB (" + std::to_string(line.size()) +
           " bytes)";
  }
  // Nesting depth outside strings: the parser and the serializer recurse once per level.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : line) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxPhaseLineDepth) {
        return "nested deeper than " + std::to_string(kMaxPhaseLineDepth) + " levels";
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return "";
}

bool clamp_phase_time(PhaseEvent& p, double lo, double hi) {
  if (!(hi > 0)) return false;
  const double slack = 1.0;  // a second of ordinary drift between hosts is not worth a word
  double t = p.t;
  if (!(t >= lo)) t = lo;  // NaN too
  if (t > hi) t = hi;
  bool skewed = !(std::abs(t - p.t) <= slack);
  p.t = t;
  return skewed;
}

std::optional<PhaseEvent> phase_event(const nlohmann::json& j) {
  if (!j.contains("phase") || !j["phase"].is_string()) return std::nullopt;
  PhaseEvent p;
  p.name = j["phase"].get<std::string>();
  if (j.contains("t") && j["t"].is_number()) p.t = j["t"].get<double>();
  if (!std::isfinite(p.t)) p.t = 0;
  if (j.contains("pid") && j["pid"].is_number_integer()) p.pid = j["pid"].get<int>();
  if (j.contains("rank") && j["rank"].is_number_integer()) p.rank = j["rank"].get<int>();
  if (j.contains("host") && j["host"].is_string()) p.host = j["host"].get<std::string>();
  return p;
}

int open_phase_file(const std::string& path, std::string* why) {
  // O_NOFOLLOW: a link (to /dev/zero, to a file elsewhere) is not the workload's
  // file; O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (why && errno != ENOENT) {
      *why = errno == ELOOP ? "is a symbolic link, not read" : std::string("cannot be read: ") + std::strerror(errno);
    }
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (why) *why = "is not a regular file (a FIFO or a device?), not read";
    ::close(fd);
    return -1;
  }
  return fd;
}

PhaseLog read_phase_file(const std::string& path, const std::function<void(const std::string&)>& warn, double earliest,
                         double latest) {
  PhaseLog log;
  std::string unreadable;
  const int fd = open_phase_file(path, &unreadable);
  if (fd < 0) {
    if (!unreadable.empty() && warn) warn(path + ": phase file " + unreadable);
    return log;
  }
  int line_no = 0;
  int malformed = 0, first_malformed = 0;  // one warning per file, however much garbage it holds
  std::string first_bound;                 // why the first line out of bounds was not parsed
  int out_of_bounds = 0, first_out_of_bounds = 0, skewed = 0, first_skewed = 0;
  auto parse_line = [&](std::string_view line, const std::string& bound) {
    ++line_no;
    if (bound.empty() && line.find_first_not_of(" \t\r") == std::string::npos) return;
    if (!bound.empty()) {
      if (out_of_bounds++ == 0) {
        first_out_of_bounds = line_no;
        first_bound = bound;
      }
      return;
    }
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (malformed++ == 0) first_malformed = line_no;
      return;
    }
    if (auto p = phase_event(j)) {
      if (clamp_phase_time(*p, earliest, latest) && skewed++ == 0) first_skewed = line_no;
      log.phases.push_back(std::move(*p));
      return;
    }
    // Metrics: {"metric": name, "value": v, ...} keyed by name; repeated names (one
    // per rank, say) collect into an array. Other objects are kept under "events".
    if (j.contains("metric") && j["metric"].is_string()) {
      std::string name = j["metric"].get<std::string>();
      nlohmann::json value = j.contains("value") ? j["value"] : nlohmann::json(nullptr);
      auto& slot = log.metrics[name];
      if (slot.is_null())
        slot = value;
      else if (slot.is_array() && log.metrics.contains("__array_" + name))
        slot.push_back(value);
      else {
        slot = nlohmann::json::array({slot, value});
        log.metrics["__array_" + name] = true;
      }
      return;
    }
    log.metrics["events"].push_back(j);
  };
  // Read in bounded chunks: a line is held only up to its bound (a gigabyte without
  // a newline costs one chunk, not a gigabyte), the file only up to its own.
  std::string line;      // the line being read, while within its bound
  size_t long_line = 0;  // the bytes of a line past its bound so far (0: none)
  long long bytes = 0;
  bool past_file_bound = false;
  std::vector<char> chunk(64 * 1024);
  auto take = [&](std::string_view piece) {
    if (long_line > 0) {
      long_line += piece.size();
    } else if (line.size() + piece.size() > kMaxPhaseLineBytes) {
      long_line = line.size() + piece.size();
      std::string().swap(line);
    } else {
      line.append(piece);
    }
  };
  auto end_line = [&]() {
    if (long_line > 0)
      parse_line({}, "longer than " + std::to_string(kMaxPhaseLineBytes / 1024) + " KiB (" + std::to_string(long_line) +
                         " bytes)");
    else
      parse_line(line, phase_line_out_of_bounds(line));
    line.clear();
    long_line = 0;
  };
  while (!past_file_bound) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (bytes + n > kMaxPhaseFileBytes) {
      n = static_cast<ssize_t>(kMaxPhaseFileBytes - bytes);
      past_file_bound = true;
    }
    bytes += n;
    std::string_view rest(chunk.data(), static_cast<size_t>(n));
    for (size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1)) {
      take(rest.substr(0, nl));
      end_line();
    }
    take(rest);
  }
  ::close(fd);
  const std::string file_bound = "the file's bound of " + std::to_string(kMaxPhaseFileBytes / (1024 * 1024)) + " MiB";
  if (past_file_bound && long_line > 0) {
    parse_line({}, "longer than " + std::to_string(kMaxPhaseLineBytes / 1024) + " KiB (" + std::to_string(long_line) +
                       " bytes up to " + file_bound + ")");
  } else if (past_file_bound) {
    parse_line({}, "past " + file_bound);
  } else if (long_line > 0 || !line.empty()) {
    end_line();  // the last line, without its newline
  }
  if (malformed > 0 && warn) {
    warn(path + ":" + std::to_string(first_malformed) + ": malformed phase line ignored" +
         (malformed > 1 ? ", and " + std::to_string(malformed - 1) + " more after it" : ""));
  }
  if (out_of_bounds > 0 && warn) {
    warn(path + ":" + std::to_string(first_out_of_bounds) + ": phase line ignored unparsed (" + first_bound + ")" +
         (out_of_bounds > 1 ? ", and " + std::to_string(out_of_bounds - 1) + " more after it" : ""));
  }
  if (skewed > 0 && warn) {
    warn(path + ":" + std::to_string(first_skewed) +
         ": phase time outside the trial's lifetime as the harness saw it (a skewed clock?); clamped to it" +
         (skewed > 1 ? ", and " + std::to_string(skewed - 1) + " more after it" : ""));
  }
  // The markers above only told repeated scalars from genuine array values.
  for (auto it = log.metrics.begin(); it != log.metrics.end();) {
    if (it.key().rfind("__array_", 0) == 0)
      it = log.metrics.erase(it);
    else
      ++it;
  }
  return log;
}

std::string last_phase_before(const std::vector<PhaseEvent>& phases, double deadline) {
  const PhaseEvent* last = nullptr;
  for (const auto& p : phases) {
    if (p.t <= deadline && (!last || p.t >= last->t)) last = &p;
  }
  return last ? last->name : "";
}

}  // namespace hangbench::exec_detail

namespace hangbench::exec_detail {

std::vector<PhaseEvent> PhaseFollower::poll(double now) {
  std::vector<PhaseEvent> out;
  const int fd = open_phase_file(path_, nullptr);  // never a FIFO's writer awaited, never a link followed
  if (fd < 0) return out;
  // A bounded read per poll: a flood without newlines cannot grow what we hold.
  std::string chunk(16 * (kMaxPhaseLineBytes + 1), '\0');
  ssize_t got = ::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(offset_));
  ::close(fd);
  chunk.resize(got > 0 ? static_cast<size_t>(got) : 0);
  offset_ += static_cast<long long>(chunk.size());
  partial_ += chunk;
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(partial_.data() + start, nl - start);
    if (skipping_) {  // the tail of a line that was already too long
      skipping_ = false;
      continue;
    }
    if (!phase_line_out_of_bounds(line).empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (auto p = j.is_object() ? phase_event(j) : std::nullopt; p && j["t"].is_number()) {
      clamped_ += clamp_phase_time(*p, last_poll_, now);
      out.push_back(std::move(*p));
    }
  }
  partial_.erase(0, start);
  if (partial_.size() > kMaxPhaseLineBytes) {
    partial_.clear();
    skipping_ = true;
  }
  last_poll_ = now;
  return out;
}

double phase_deadline(const std::vector<PhaseEvent>& phases, const std::map<std::string, double>& timeouts,
                      std::string* which) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& p : phases) {
    auto it = timeouts.find(p.name);
    if (it == timeouts.end() || !(p.t + it->second < best)) continue;
    best = p.t + it->second;
    if (which) *which = p.name;
  }
  return best;
}

}  // namespace hangbench::exec_detail
