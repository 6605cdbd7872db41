// hangbench_soak: pathological trials under a harness that keeps being SIGKILLed.
//
// Runs `hangbench run` over a matrix of the test workloads that misbehave (hang
// forever, ignore SIGTERM, stop themselves, double-fork a daemon, crash, fork 50
// children, write 50 MB), SIGKILLs the harness K times and the harness and its
// watcher together C times (as an OOM killer or a node agent may), in a random
// order at random moments, and continues with `run --resume` after each kill. The soak is this process's
// child subreaper, so every process the dead harness leaves behind (trials,
// daemons, its watcher) reparents here: after each kill it measures how long
// until none is left, and counts the hangbench cgroups left. At the end it
// checks the store: every trial exactly once, integrity ok, and each cell's
// trials classed as their workload dictates. Prints one JSON object; exit 0 when
// every check held, 1 when one did not, 2 on bad arguments.
//
//   hangbench_soak [--trials N] [--kills K] [--combined-kills C] [--seed S] [--out DIR] [--keep]
//                  [--hangbench PATH]
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exec/cgroup.hpp"
#include "exec/proc_scan.hpp"

extern char** environ;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Behaviour {
  std::string name;      // cell value of the `behaviour` axis
  std::string command;   // after {workloads}/test_workloads/
  std::string expected;  // the outcome every trial of the cell must get
  double share;          // of the trials
  double timeout_s;      // short only where the hang is the point; healthy cells get room on a loaded machine
};

// The pathologies of the issue, each with the class its workload dictates.
const std::vector<Behaviour> kBehaviours = {
    {"hang", "hb_test_hang", "HANG", 0.14, 10.0},  // teardown_begin + 1 s makes it a hang
    {"ignore_term", "hb_test_ignore_term", "HANG", 0.14, 2.0},
    {"sigstop", "hb_test_sigstop", "HANG", 0.14, 2.0},
    {"daemon", "hb_test_daemon", "PASSED", 0.14, 10.0},
    {"segv", "hb_test_segv", "CRASHED", 0.14, 10.0},
    {"children", "hb_test_children --count=50", "HANG", 0.10, 10.0},  // teardown_begin + 1 s
    {"garbage", "hb_test_pass --garbage-lines=2000", "PASSED", 0.14, 10.0},
    {"flood", "hb_test_flood --mb=50", "PASSED", 0.06, 10.0},
};

struct Args {
  int trials = 1000;
  int kills = 20;
  int combined_kills = 0;  // the harness and its watcher at once
  unsigned seed = 0;
  std::string out;
  bool keep = false;
  std::string hangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The matrix: trials split over the behaviours by share, at least one each.
std::string write_matrix(const fs::path& path, int trials) {
  std::string axis, cells;
  int left = trials;
  for (size_t i = 0; i < kBehaviours.size(); ++i) {
    const auto& b = kBehaviours[i];
    int n = i + 1 == kBehaviours.size() ? left : std::max(1, static_cast<int>(trials * b.share + 0.5));
    n = std::max(1, std::min(n, left - static_cast<int>(kBehaviours.size() - 1 - i)));
    left -= n;
    axis += (axis.empty() ? "" : ", ") + ("\"" + b.name + "\"");
    cells += "\n[[cell]]\nmatch = { behaviour = \"" + b.name + "\" }\ncommand = \"{workloads}/test_workloads/" +
             b.command + "\"\ntrials = " + std::to_string(n) + "\ntimeout = " + std::to_string(b.timeout_s) +
             "\nexpect = \"" + (b.expected == "HANG" ? "hang" : "no-hang") + "\"\n";
  }
  std::ofstream out(path);
  out << "# Written by hangbench_soak: one cell per pathological workload.\n"
      << "name = \"soak\"\ncommand = \"{workloads}/test_workloads/hb_test_pass\"\n"
      << "trials = 1\ntimeout = 2.0\ngrace = 0.2\nstacks = false\nconcurrency = 4\n\n"
      << "[phase_timeouts]\nteardown_begin = 1.0\n\n[axes]\nbehaviour = [" << axis << "]\n"
      << cells;
  return path.string();
}

pid_t start(const std::string& exe, const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv{const_cast<char*>(exe.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// What the harness left: live (not zombie) processes whose parent is this process
// (orphans come to us), and any whose environment names a trial folder of the run
// (a trial process whose parent is still alive: an init of a PID namespace, say).
std::set<int> left_behind(const std::string& trial_dir_prefix) {
  std::set<int> out;
  const int self = static_cast<int>(::getpid());
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  while (dirent* e = ::readdir(dir)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0 || pid == self) continue;
    auto st = hangbench::exec_detail::read_proc_stat(pid);
    if (!st || st->state == 'Z') continue;
    if (st->ppid == self || hangbench::exec_detail::environ_has_prefix(pid, trial_dir_prefix)) out.insert(pid);
  }
  ::closedir(dir);
  return out;
}

// The harness's watcher: its child named hangbench-watch, or -1.
int watcher_of(int harness) {
  DIR* dir = ::opendir("/proc");
  if (!dir) return -1;
  int found = -1;
  while (dirent* e = ::readdir(dir)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    auto st = hangbench::exec_detail::read_proc_stat(pid);
    if (!st || st->ppid != harness) continue;
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "hangbench-watch") found = pid;
  }
  ::closedir(dir);
  return found;
}

void reap_all() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

// hangbench-* groups under the cgroup root whose name carries this harness pid.
int cgroups_of(const std::string& root, int harness_pid) {
  if (root.empty()) return 0;
  int n = 0;
  std::string tag1 = "hangbench-" + std::to_string(harness_pid) + ".",
              tag2 = "hangbench-hb" + std::to_string(harness_pid) + "-";
  for (const auto& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    n += name.rfind(tag1, 0) == 0 || name.rfind(tag2, 0) == 0;
  }
  return n;
}

// What holds each group cgroups_of counts: its name, whether it is populated and
// each member's name and state (a group left behind says why it could not go).
std::vector<std::string> describe_cgroups_of(const std::string& root, int harness_pid) {
  std::vector<std::string> out;
  if (root.empty()) return out;
  std::string tag1 = "hangbench-" + std::to_string(harness_pid) + ".",
              tag2 = "hangbench-hb" + std::to_string(harness_pid) + "-";
  for (const auto& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (name.rfind(tag1, 0) != 0 && name.rfind(tag2, 0) != 0) continue;
    std::ifstream events(e.path() / "cgroup.events"), procs(e.path() / "cgroup.procs");
    std::string line, text = name + ":";
    while (std::getline(events, line)) text += " " + line;
    for (int pid; procs >> pid;) {
      std::ifstream status("/proc/" + std::to_string(pid) + "/status");
      std::string field, fields;
      while (std::getline(status, field))
        if (field.rfind("Name:", 0) == 0 || field.rfind("State:", 0) == 0 || field.rfind("PPid:", 0) == 0)
          fields += " " + field;
      text += "; pid " + std::to_string(pid) + fields;
    }
    out.push_back(text);
  }
  return out;
}

struct Sql {
  sqlite3* db = nullptr;
  explicit Sql(const fs::path& path) {
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      sqlite3_close(db);
      db = nullptr;
    } else {
      sqlite3_busy_timeout(db, 5000);
    }
  }
  ~Sql() { sqlite3_close(db); }
  std::vector<std::vector<std::string>> rows(const char* sql) const {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt* st = nullptr;
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return out;
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        auto* text = sqlite3_column_text(st, i);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    return out;
  }
  std::string one(const char* sql) const {
    auto r = rows(sql);
    return r.empty() || r[0].empty() ? "" : r[0][0];
  }
};

bool parse_args(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--trials")
      a.trials = std::atoi(value().c_str());
    else if (arg == "--kills")
      a.kills = std::atoi(value().c_str());
    else if (arg == "--combined-kills")
      a.combined_kills = std::atoi(value().c_str());
    else if (arg == "--seed")
      a.seed = static_cast<unsigned>(std::strtoul(value().c_str(), nullptr, 10));
    else if (arg == "--out")
      a.out = value();
    else if (arg == "--hangbench")
      a.hangbench = value();
    else if (arg == "--keep")
      a.keep = true;
    else
      return false;
  }
  return a.trials >= static_cast<int>(kBehaviours.size()) && a.kills >= 0 && a.combined_kills >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    std::cerr << "usage: hangbench_soak [--trials N>=" << kBehaviours.size()
              << "] [--kills K] [--combined-kills C] [--seed S] [--out DIR] [--keep] [--hangbench PATH]\n";
    return 2;
  }
  if (args.seed == 0) args.seed = std::random_device{}();
  // Orphans of a killed harness come to us: we can count them and must reap them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  fs::path base =
      args.out.empty() ? fs::temp_directory_path() / ("hb_soak_" + std::to_string(::getpid())) : fs::path(args.out);
  fs::remove_all(base);
  fs::create_directories(base / "logs");
  fs::path run_dir = base / "run", db = run_dir / "hangbench.sqlite";
  std::string matrix = write_matrix(base / "soak.toml", args.trials);
  std::string cgroup_root = hangbench::exec_detail::find_writable_cgroup_root();
  std::mt19937 rng(args.seed);

  // Which kill is which, in a random order.
  std::vector<bool> combined(static_cast<size_t>(args.kills), false);
  combined.insert(combined.end(), static_cast<size_t>(args.combined_kills), true);
  std::shuffle(combined.begin(), combined.end(), rng);
  const int total_kills = static_cast<int>(combined.size());

  nlohmann::json kills = nlohmann::json::array();
  int max_survivors = 0, max_cgroups = 0, integrity_failures = 0, bad_exits = 0, watchers_missed = 0;
  int max_survivors_1s = 0, max_cgroups_1s = 0;
  int harness_kills = 0, combined_kills = 0;  // the kills made, not those asked for
  double worst_cleanup_s = 0;
  auto started = Clock::now();
  for (int k = 0; k <= total_kills; ++k) {
    bool resume = fs::exists(db) && !Sql(db).one("SELECT id FROM runs LIMIT 1").empty();
    std::vector<std::string> cmd =
        resume ? std::vector<std::string>{"run", "--resume", "--out", run_dir.string(), "--format", "json"}
               : std::vector<std::string>{"run", "--matrix", matrix, "--out", run_dir.string(), "--format", "json"};
    pid_t pid = start(args.hangbench, cmd, base / "logs" / (std::to_string(k) + ".log"));
    if (pid <= 0) {
      std::cerr << "hangbench_soak: cannot start " << args.hangbench << "\n";
      return 2;
    }
    if (k == total_kills) {  // the last one runs to the end
      int status = 0;
      ::waitpid(pid, &status, 0);
      int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      bad_exits += rc != 0 && rc != 1;
      reap_all();
      break;
    }
    // A random moment of the run: up to 4 s after it started.
    double delay = std::uniform_real_distribution<double>(0.2, 4.0)(rng);
    int status = 0;
    bool exited = false;
    auto t0 = Clock::now();
    while (seconds_since(t0) < delay) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (exited) {  // finished before its kill: nothing more to soak
      bad_exits += !(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
      break;
    }
    int rows_before = std::atoi(Sql(db).one("SELECT COUNT(*) FROM trials").c_str());
    const bool both = combined[static_cast<size_t>(k)];
    int watcher = both ? watcher_of(pid) : -1;
    watchers_missed += both && watcher <= 0;
    ::kill(pid, SIGKILL);
    if (watcher > 0) ::kill(watcher, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    (watcher > 0 ? combined_kills : harness_kills) += 1;  // a watcher not found: the harness alone was killed
    auto killed_at = Clock::now();
    // Wait on the condition (no process and no cgroup of the dead harness left), bounded.
    std::set<int> left;
    int groups = 0;
    double cleared_s = -1;
    int left_1s = -1, groups_1s = -1;  // what was still there 1 s after the kill
    while (seconds_since(killed_at) < 10.0) {
      reap_all();
      left = left_behind("HANGBENCH_TRIAL_DIR=" + run_dir.string() + "/");
      groups = cgroups_of(cgroup_root, pid);
      if (left.empty() && groups == 0) {
        cleared_s = seconds_since(killed_at);
        break;
      }
      if (left_1s < 0 && seconds_since(killed_at) >= 1.0) {
        left_1s = static_cast<int>(left.size());
        groups_1s = groups;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (left_1s < 0) left_1s = groups_1s = 0;  // cleared within the second
    max_survivors_1s = std::max(max_survivors_1s, left_1s);
    max_cgroups_1s = std::max(max_cgroups_1s, groups_1s);
    reap_all();
    std::string integrity = Sql(db).one("PRAGMA integrity_check");
    integrity_failures += fs::exists(db) && integrity != "ok";
    max_survivors = std::max(max_survivors, static_cast<int>(left.size()));
    max_cgroups = std::max(max_cgroups, groups);
    worst_cleanup_s = std::max(worst_cleanup_s, cleared_s < 0 ? 10.0 : cleared_s);
    const auto groups_left = describe_cgroups_of(cgroup_root, pid);
    for (int p : left) ::kill(p, SIGKILL);  // so that the next round starts clean
    kills.push_back({{"groups_left", groups_left},
                     {"kind", watcher > 0 ? "harness+watcher" : "harness"},
                     {"after_s", delay},
                     {"rows_at_kill", rows_before},
                     {"survivors_after_1s", left_1s},
                     {"cgroups_after_1s", groups_1s},
                     {"survivors_after_10s", left.size()},
                     {"cgroups_left", groups},
                     {"cleared_s", cleared_s},
                     {"integrity", integrity}});
  }

  Sql sql(db);
  int rows = std::atoi(sql.one("SELECT COUNT(*) FROM trials").c_str());
  int distinct = std::atoi(sql.one("SELECT COUNT(*) FROM (SELECT DISTINCT run_id, cell_id, idx FROM trials)").c_str());
  std::string status = sql.one("SELECT status FROM runs");
  std::string integrity = sql.one("PRAGMA integrity_check");
  int misclassified = 0;
  nlohmann::json outcomes = nlohmann::json::object();
  for (const auto& r : sql.rows("SELECT cell_id, outcome, COUNT(*) FROM trials GROUP BY cell_id, outcome")) {
    outcomes[r[0]][r[1]] = std::atoi(r[2].c_str());
    for (const auto& b : kBehaviours) {
      if (r[0] == "behaviour=" + b.name && r[1] != b.expected) misclassified += std::atoi(r[2].c_str());
    }
  }
  bool ok = rows == args.trials && distinct == args.trials && status == "complete" && integrity == "ok" &&
            integrity_failures == 0 && max_survivors == 0 && max_cgroups == 0 && max_survivors_1s == 0 &&
            max_cgroups_1s == 0 && misclassified == 0 && bad_exits == 0 && watchers_missed == 0;
  // Provenance: the run's own (host, kernel, commit, start, trial isolation) and this command.
  nlohmann::json provenance = nlohmann::json::parse(sql.one("SELECT provenance_json FROM runs"), nullptr, false);
  if (provenance.is_discarded()) provenance = nlohmann::json::object();
  std::vector<std::string> command(argv, argv + argc);
  provenance["soak_command"] = command;
  nlohmann::json report = {
      {"ok", ok},
      {"trials_planned", args.trials},
      {"kills", kills.size()},
      {"kills_of_the_harness", harness_kills},
      {"kills_of_harness_and_watcher", combined_kills},
      {"kills_planned", {{"of_the_harness", args.kills}, {"of_harness_and_watcher", args.combined_kills}}},
      {"watchers_not_found", watchers_missed},
      {"max_survivors_1s_after_kill", max_survivors_1s},
      {"max_cgroups_1s_after_kill", max_cgroups_1s},
      {"seed", args.seed},
      {"cgroups", !cgroup_root.empty()},
      {"rows", rows},
      {"distinct_rows", distinct},
      {"run_status", status},
      {"integrity", integrity},
      {"integrity_failures_after_kills", integrity_failures},
      {"max_survivors_after_kill", max_survivors},
      {"max_cgroups_left_after_kill", max_cgroups},
      {"worst_time_to_clean_s", worst_cleanup_s},
      {"misclassified", misclassified},
      {"bad_exit_codes", bad_exits},
      {"outcomes", outcomes},
      {"wall_s", seconds_since(started)},
      {"per_kill", kills},
      {"provenance", provenance},
  };
  std::cout << report.dump(2) << "\n";
  if (!args.keep) fs::remove_all(base);
  return ok ? 0 : 1;
}
