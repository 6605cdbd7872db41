// collect_flight_recorder(): write to the rank's dump pipe, wait for the dump
// file to appear and stop growing, read it back and summarise it.
#include "hangbench/flight_recorder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "hangbench/proc.hpp"
#include "inspect/pickle_reader.hpp"

namespace hangbench::diagnose {

namespace fs = std::filesystem;

namespace {

// Files in prefix's folder whose names start with prefix's last part (the rank follows);
// with a known rank, only that rank's own file.
std::vector<fs::path> with_prefix(const std::string& prefix, bool pipes, int rank) {
  std::vector<fs::path> out;
  if (rank >= 0) {
    const fs::path own = prefix + std::to_string(rank) + (pipes ? ".pipe" : "");
    std::error_code ec;
    if (fs::exists(own, ec)) out.push_back(own);
    return out;
  }
  fs::path p(prefix);
  std::error_code ec;
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::string stem = p.filename().string();
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    bool is_pipe = name.size() > 5 && name.compare(name.size() - 5, 5, ".pipe") == 0;
    if (name.rfind(stem, 0) == 0 && is_pipe == pipes) out.push_back(entry.path());
  }
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json entry_summary(const nlohmann::json& e) {
  auto get = [&](const char* key) { return e.contains(key) ? e[key] : nlohmann::json(nullptr); };
  return {{"record_id", get("record_id")},
          {"collective_seq_id", get("collective_seq_id")},
          {"p2p_seq_id", get("p2p_seq_id")},
          {"op", get("profiling_name")},
          {"input_sizes", get("input_sizes")},
          {"output_sizes", get("output_sizes")},
          {"state", get("state")},
          {"process_group", get("process_group")}};
}

}  // namespace

std::map<std::string, std::string> read_environment(const std::string& proc_root, int pid) {
  std::map<std::string, std::string> out;
  auto text = proc::read_text(proc_root + "/" + std::to_string(pid) + "/environ");
  if (!text) return out;
  std::istringstream in(*text);
  for (std::string item; std::getline(in, item, '\0');)
    if (auto eq = item.find('='); eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  return out;
}

FlightRecorderSettings flight_recorder_settings(const std::map<std::string, std::string>& environment) {
  FlightRecorderSettings s;
  auto value = [&](const char* name) {
    auto it = environment.find(name);
    return it == environment.end() ? std::string() : it->second;
  };
  // PyTorch 2.11 reads the TORCH_FR_ names first and still honours the older ones.
  auto either = [&](const char* name, const char* older) {
    const std::string v = value(name);
    return v.empty() ? value(older) : v;
  };
  const std::string buffer = either("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE");
  s.buffer_size = buffer.empty() ? -1 : std::max(0L, std::strtol(buffer.c_str(), nullptr, 10));
  if (const std::string given = either("TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"); !given.empty()) {
    s.dump_prefixes = {given};
  } else {
    // PyTorch's own defaults (DebugInfoWriter::getWriter): HOME's cache from 2.7, /tmp before.
    const std::string home = value("HOME").empty() ? "/tmp" : value("HOME");
    s.dump_prefixes = {home + "/.cache/torch/comm_lib_trace_rank_", home + "/.cache/torch/nccl_trace_rank_",
                       "/tmp/nccl_trace_rank_"};
  }
  s.pipe_prefix = value("TORCH_NCCL_DEBUG_INFO_PIPE_FILE");
  const double poll_ms = std::strtod(value("TORCH_NCCL_COORD_CHECK_MILSEC").c_str(), nullptr);
  if (poll_ms > 0 && poll_ms < 3.6e6) s.poll_interval_s = poll_ms / 1000.0;
  const std::string rank = value("RANK");
  char* end = nullptr;
  const long r = std::strtol(rank.c_str(), &end, 10);
  if (!rank.empty() && end && *end == '\0' && r >= 0 && r < (1L << 30)) s.rank = static_cast<int>(r);
  return s;
}

std::string FlightRecorderSettings::dump_places() const {
  std::string out;
  for (const auto& prefix : dump_prefixes) out += (out.empty() ? "" : " or ") + prefix + "<rank>";
  return out;
}

double flight_recorder_wait_bound(const FlightRecorderSettings& settings, double budget_s, double requested_s) {
  if (requested_s >= 0) return std::min(requested_s, std::max(0.0, budget_s));  // `diagnose --fr-wait`
  return std::max(0.0, std::min(budget_s / 4.0, 2.0 * settings.poll_interval_s + 0.5));
}

double flight_recorder_writing_bound(double bound_s, double budget_s, double requested_s) {
  if (requested_s >= 0) return bound_s;
  return std::max(bound_s, std::min(std::max(0.0, budget_s) / 2.0, 10.0));
}

FlightRecorderDump collect_flight_recorder(const FlightRecorderSettings& settings, double timeout_s,
                                           const std::function<std::string()>& blocked,
                                           const std::function<std::string()>& writer, double writing_timeout_s) {
  FlightRecorderDump d;
  d.attempted = true;
  if (!settings.askable()) {
    d.skipped_reason = settings.buffer_size == 0
                           ? "the Flight Recorder is off (TORCH_FR_BUFFER_SIZE or TORCH_NCCL_TRACE_BUFFER_SIZE is 0)"
                           : "the Flight Recorder is not set up (no TORCH_FR_BUFFER_SIZE, "
                             "TORCH_NCCL_TRACE_BUFFER_SIZE or TORCH_NCCL_DEBUG_INFO_PIPE_FILE)";
    return d;
  }
  auto dumps = [&] {
    std::vector<fs::path> out;
    for (const auto& prefix : settings.dump_prefixes)
      for (auto& f : with_prefix(prefix, false, settings.rank)) out.push_back(std::move(f));
    return out;
  };
  // What the dumps looked like before asking: file timestamps are coarser than the clock, so
  // a dump is fresh when it is new or changed, not when its time is later than ours.
  std::map<fs::path, std::pair<fs::file_time_type, std::uintmax_t>> before;
  for (const auto& f : dumps()) {
    std::error_code ec;
    before[f] = {fs::last_write_time(f, ec), fs::file_size(f, ec)};
  }
  auto changed = [&](const fs::path& f) {
    std::error_code ec;
    auto it = before.find(f);
    return it == before.end() || it->second != std::pair{fs::last_write_time(f, ec), fs::file_size(f, ec)};
  };
  if (settings.pipe_prefix.empty()) {
    d.skipped_reason = "no dump pipe (TORCH_NCCL_DEBUG_INFO_PIPE_FILE is unset); an earlier dump is used if one exists";
  } else {
    auto pipes = with_prefix(settings.pipe_prefix, true, settings.rank);
    if (pipes.empty()) {
      d.skipped_reason =
          fmt::format("no pipe {}{}.pipe exists (the rank has not made it, or removed it)", settings.pipe_prefix,
                      settings.rank >= 0 ? std::to_string(settings.rank) : "<rank>");
    } else {
      d.pipe = pipes.front().string();
      // Non-blocking: with nobody reading (the monitor thread is gone) open() fails at once instead of waiting.
      int fd = ::open(d.pipe.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) {
        d.skipped_reason = errno == ENXIO
                               ? fmt::format("nobody reads {} (the rank's monitor thread has stopped)", d.pipe)
                               : fmt::format("cannot open {}: {}", d.pipe, std::strerror(errno));
      } else {
        if (::write(fd, "1\n", 2) != 2)
          d.skipped_reason = fmt::format("cannot write to {}: {}", d.pipe, std::strerror(errno));
        ::close(fd);
      }
    }
  }
  // Wait for a dump newer than the request whose size has settled; fall back to an older one.
  bool asked = !d.pipe.empty() && d.skipped_reason.empty();
  const auto asked_at = std::chrono::steady_clock::now();
  auto deadline = asked_at + std::chrono::duration<double>(asked ? timeout_s : 0);
  std::string writing;  // the thread seen writing the dump, once the wait was lengthened for it
  std::uintmax_t last_size = 0;
  fs::path chosen;
  std::string cannot_come;
  for (;;) {
    if (asked && blocked && cannot_come.empty()) {
      cannot_come = blocked();
      if (!cannot_come.empty()) deadline = std::chrono::steady_clock::now();  // no dump will come: stop waiting
    }
    if (asked && writer && writing.empty() && cannot_come.empty() && writing_timeout_s > timeout_s) {
      writing = writer();
      if (!writing.empty()) deadline = asked_at + std::chrono::duration<double>(writing_timeout_s);
    }
    std::error_code ec;
    fs::path newest;
    for (const auto& f : dumps())
      if (newest.empty() || fs::last_write_time(f, ec) > fs::last_write_time(newest, ec)) newest = f;
    if (!newest.empty()) {
      bool fresh = changed(newest);
      std::uintmax_t size = fs::file_size(newest, ec);
      if (fresh && size > 0 && size == last_size) {
        chosen = newest;
        d.fresh = true;
        break;
      }
      last_size = fresh ? size : 0;
      if (!asked || std::chrono::steady_clock::now() > deadline) {
        chosen = newest;
        d.fresh = fresh;
        break;
      }
    } else if (!asked || std::chrono::steady_clock::now() > deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a file another process writes
  }
  if (chosen.empty()) {
    if (!cannot_come.empty())
      d.skipped_reason = cannot_come + "; not waited for, and no earlier dump " + settings.dump_places() + " exists";
    else if (d.skipped_reason.empty())
      // PyTorch symbolises its C++ stack traces before it writes the dump: seconds, at times.
      d.skipped_reason = fmt::format(
          "no dump {} appeared within {} s{}", settings.dump_places(), writing.empty() ? timeout_s : writing_timeout_s,
          writing.empty() ? " (the rank may still be writing it: `diagnose --fr-wait SECONDS` waits longer; or its "
                            "dump failed: PyTorch drops a pipe dump's error unless the rank runs with "
                            "TORCH_CPP_LOG_LEVEL=INFO)"
                          : ", while " + writing + " (`diagnose --fr-wait SECONDS` waits longer)");
    return d;
  }
  d.file = chosen.string();
  if (!cannot_come.empty() && !d.fresh)
    d.skipped_reason = cannot_come + "; not waited for: the newest dump already written is summarised";
  else if (asked && !d.fresh)
    d.skipped_reason = "the rank did not dump within the bound; an earlier dump is summarised";
  try {
    d.summary = summarize_flight_recorder(unpickle_plain(read_file(chosen)));
  } catch (const std::exception& e) {
    d.skipped_reason = fmt::format("{} could not be read: {}", d.file, e.what());
  }
  return d;
}

nlohmann::json summarize_flight_recorder(const nlohmann::json& dump) {
  nlohmann::json out = {{"version", dump.value("version", nlohmann::json(nullptr))},
                        {"entries", 0},
                        {"last_enqueued", nullptr},
                        {"last_started", nullptr},
                        {"last_completed", nullptr}};
  auto entries = dump.find("entries");
  if (entries == dump.end() || !entries->is_array()) return out;
  out["entries"] = entries->size();
  for (const auto& e : *entries) {  // oldest first
    if (!e.is_object()) continue;
    std::string state = e.value("state", "");
    out["last_enqueued"] = entry_summary(e);
    if (state == "started" || state == "completed") out["last_started"] = entry_summary(e);
    if (state == "completed") out["last_completed"] = entry_summary(e);
  }
  return out;
}

}  // namespace hangbench::diagnose
