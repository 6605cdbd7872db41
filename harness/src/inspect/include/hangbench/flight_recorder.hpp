// PyTorch's Flight Recorder, collected from a live process: a rank started with
// TORCH_NCCL_TRACE_BUFFER_SIZE > 0 and TORCH_NCCL_DEBUG_INFO_PIPE_FILE keeps a
// named pipe `<pipe prefix><rank>.pipe`; a byte written there makes it dump its
// trace to `<TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank>`, the file PyTorch's analyzer
// (torch.distributed.flight_recorder) reads. diagnose triggers that dump, waits
// for it (bounded), and summarises it per rank.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hangbench::diagnose {

struct FlightRecorderSettings {
  // TORCH_FR_BUFFER_SIZE, or its older name TORCH_NCCL_TRACE_BUFFER_SIZE; -1 when neither is
  // set: recent PyTorch then records 2000 entries, older PyTorch none.
  long buffer_size = -1;
  // Where the rank writes its dump: TORCH_FR_DUMP_TEMP_FILE or TORCH_NCCL_DEBUG_INFO_TEMP_FILE;
  // unset, PyTorch's defaults, newest first: $HOME/.cache/torch/comm_lib_trace_rank_ (2.11),
  // $HOME/.cache/torch/nccl_trace_rank_, /tmp/nccl_trace_rank_ (before 2.7).
  std::vector<std::string> dump_prefixes;
  std::string pipe_prefix;  // TORCH_NCCL_DEBUG_INFO_PIPE_FILE ("" = no pipe)
  // The process's global rank (RANK): PyTorch names its pipe <pipe_prefix><rank>.pipe and its
  // dump <dump prefix><rank>. Ranks share the prefixes, so a rank's own files are these;
  // -1 (no RANK) falls back to any file with the prefix.
  int rank = -1;
  // How often PyTorch's monitor thread looks at the pipe (TORCH_NCCL_COORD_CHECK_MILSEC,
  // 1000 ms by default): a dump comes at its next look, or not while we wait.
  double poll_interval_s = 1.0;

  // Whether the rank records and can be asked: a buffer above 0, or, unset, a dump pipe
  // (only a PyTorch that records by default opens one then).
  bool askable() const { return buffer_size > 0 || (buffer_size < 0 && !pipe_prefix.empty()); }
  // The dump's places for a message: "P<rank>", or "P1<rank> or P2<rank> ...".
  std::string dump_places() const;
};

// How long to wait for a rank's dump: two of its monitor's looks and half a second to
// write (on the H100 a dump came at the first look), never more than a quarter of the
// capture's budget `budget_s`: the Flight Recorder is never waited for in vain for long.
double flight_recorder_wait_bound(const FlightRecorderSettings& settings, double budget_s, double requested_s = -1);

// From a process's environment (/proc/PID/environ's NAME=VALUE entries).
FlightRecorderSettings flight_recorder_settings(const std::map<std::string, std::string>& environment);
std::map<std::string, std::string> read_environment(const std::string& proc_root, int pid);

struct FlightRecorderDump {
  bool attempted = false;
  std::string skipped_reason;  // why there is no dump, in words
  std::string pipe;            // the pipe written to
  std::string file;            // the dump (PyTorch's analyzer format: a pickle)
  bool fresh = false;          // written after diagnose asked for it
  nlohmann::json summary;      // see summarize_flight_recorder()
};

// Asks for a dump through the pipe and waits for it at most timeout_s, or until
// `blocked` (asked every 50 ms) gives a reason the dump cannot come: then it stops
// waiting, says why, and summarises the newest dump already written, if any. While
// `writer` (asked every 50 ms) names a thread writing the dump, it waits up to
// writing_timeout_s instead (never less than timeout_s).
FlightRecorderDump collect_flight_recorder(const FlightRecorderSettings& settings, double timeout_s,
                                           const std::function<std::string()>& blocked = {},
                                           const std::function<std::string()>& writer = {},
                                           double writing_timeout_s = 0);

// How long a dump seen on its way is waited for: half the capture's budget, at most 10 s,
// never less than the ordinary bound; `--fr-wait` (requested_s >= 0) stays as given.
double flight_recorder_writing_bound(double bound_s, double budget_s, double requested_s = -1);

// {"version", "entries", "last_enqueued", "last_started", "last_completed"}, each
// last_* {"record_id", "collective_seq_id", "p2p_seq_id", "op", "input_sizes",
// "output_sizes", "state", "process_group"} or null. `dump` is the unpickled file.
nlohmann::json summarize_flight_recorder(const nlohmann::json& dump);

}  // namespace hangbench::diagnose
