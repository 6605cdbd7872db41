// Errors that point to the fix: one table of command lines, the exit code each
// gets and what its message must say (the nearest command or option, the axes a
// filter can name, the run folders in a parent folder, a range in words), and
// what it must never say (CLI11's "not expected", a 300-digit bound).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
const std::string kMatrices = std::string(HB_FIXTURES_DIR) + "/matrix/";

int hangbench(const std::string& args, std::string* text) {
  FILE* pipe = ::popen((kHangbench + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char chunk[4096];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) text->append(chunk, got);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct ErrorCase {
  const char* name;
  std::string args;  // "{dir}": a folder holding runs/small (one run of small.toml) and files below
  int exit_code;
  std::vector<std::string> says;
  std::vector<std::string> never_says;
};

// ctest lists each case by its command line, not its bytes.
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << "hangbench " << c.args; }

std::vector<ErrorCase> cases() {
  return {
      {"UnknownCommand",
       "runn",
       2,
       {"hangbench: error: unknown command 'runn'; did you mean run?",
        "commands: run, report, stats, diagnose, nccl, validate, history, evidence, merge, sweep, catalog"},
       {"not expected"}},
      {"UnknownOption",
       "run --trails 5",
       2,
       {"hangbench run: error: unknown option --trails; did you mean --trials?", "hangbench run --help"},
       {"not expected", "5 --trails"}},
      {"UnknownOptionWithValue", "run --concurency=3", 2, {"did you mean --concurrency?"}, {"not expected"}},
      {"UnknownSubcommand",
       "nccl biuld",
       2,
       {"hangbench nccl: error: unknown command 'biuld'; did you mean build?",
        "commands: build, list, inspect, shim, slim, fetch"},
       {"A subcommand is required"}},
      {"OptionBeforeItsCommand",
       "--matrix m.toml run",
       2,
       {"hangbench: error: unknown option --matrix: it is an option of hangbench run"},
       {"unknown command"}},
      {"NotAWholeNumber", "run --trials abc", 2, {"hangbench run: error: --trials: 'abc' is not a whole number"}, {}},
      {"NotOneOfTheWords",
       "validate --nccl x.so --check sometimes",
       2,
       {"--check: 'sometimes' is not one of ddp, teardown"},
       {"->", "FAILED"}},
      {"ValidateWithoutALibrary", "validate", 2, {"no library to judge: pass --nccl LIB or --patch FILE"}, {}},
      {"ValidateLibraryAndPatch", "validate --nccl x.so --patch x.patch", 2, {"--nccl excludes --patch"}, {}},
      {"ValidatePatchAndHang", "validate --patch x.patch --hang all", 2, {"--patch excludes --hang"}, {}},
      {"ValidateHangWithoutALibrary",
       "validate --hang all",
       2,
       {"--hang judges one library: pass --nccl LIB"},
       {"filesystem error"}},
      {"ValidateBuildOptionWithoutPatch", "validate --git-dir nccl.git", 2, {"--git-dir requires --patch"}, {}},
      {"OptionWithoutItsValue",
       "history --format",
       2,
       {"hangbench history: error: --format needs a value: table, markdown, json or html"},
       {"required TEXT missing"}},
      {"MissingSubcommand", "history check", 2, {"hangbench history check: error: --store is required"}, {}},
      {"CommandNeedsACommand", "stats", 2, {"hangbench stats: error: give a command: fisher"}, {}},
      {"FilterMatchesNothing",
       "run --matrix " + kMatrices + "small.toml --dry-run --filter behaviour=sometimes",
       2,
       {"--filter behaviour=sometimes matches no cell; axes: behaviour = pass, exit3, hang"},
       {}},
      {"FilterNamesNoAxis",
       "run --matrix " + kMatrices + "small.toml --dry-run --filter build=2.17.1",
       2,
       {"--filter names 'build', which is not an axis (axes: behaviour = pass, exit3, hang)"},
       {}},
      {"EvidenceReferenceMatchesNothing",
       "evidence {dir}/runs/small/hangbench.sqlite --reference build=2.17.1",
       2,
       {"--reference build=2.17.1 matches no cell of the runs given; their axes: behaviour = pass, exit3, hang"},
       {"| build |"}},
      // A list option (--workload-arg) before the library: the library stays a library.
      {"SweepOfNoReadableLibrary",
       "sweep --workload-arg=-v /nonexistent/libnccl.so.2 --out {dir}/sweep-none",
       2,
       {"no library to sweep could be read; pass libnccl.so files:", "/nonexistent/libnccl.so.2: no such file"},
       {"pass LIB... or --list FILE", "release-table"}},
      {"EmptySweepList", "sweep --list {dir}/empty.txt", 2, {"empty.txt: the library list is empty"}, {}},
      {"DryRunMissingProgram",
       "run --matrix " + kMatrices + "missing_workload.toml --dry-run",
       0,
       {"warning: 1 of the 1 cells name a program that does not exist here",
        "  missing: " + std::string(HB_BINARY_DIR) +
            "/workloads/test_workloads/hb_test_no_such_program does not exist"},
       {}},
      {"ReportOnAParentFolder",
       "report --out {dir}/runs",
       2,
       {"no store at {dir}/runs/hangbench.sqlite; {dir}/runs holds 1 run folder: {dir}/runs/small "
        "(report --out one of them)"},
       {}},
      {"RunInAFolderThatHoldsARun",
       "run --matrix " + kMatrices + "small.toml --out {dir}/runs/small --progress none",
       0,
       {"hangbench: note: {dir}/runs/small already holds run ", " (small, complete, 6 trials, started ",
        "its trials stay in the store: hangbench report --out {dir}/runs/small --run "},
       {}},
      {"ReportListNamesTheMatrix", "report --out {dir}/runs/small --list", 0, {"  small  complete  6 trials"}, {}},
      {"DiagnoseTimeoutZero",
       "diagnose --timeout 0 1",
       2,
       {"--timeout: '0' is not allowed: give a number of seconds above 0 and at most 3600 (e.g. 20)"},
       {"1797693", "0.000000"}},
      {"DiagnoseFlightRecorderWaitNegative",
       "diagnose --fr-wait -1 1",
       2,
       {"--fr-wait: '-1' is not allowed: give a number of seconds from 0 and at most 3600 (e.g. 15)"},
       {}},
  };
}

std::string with_dir(std::string text, const std::string& dir) {
  for (size_t at; (at = text.find("{dir}")) != std::string::npos;) text.replace(at, 5, dir);
  return text;
}

class CliErrors : public testing::TestWithParam<ErrorCase> {
 public:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("hb_cli_errors_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_ / "runs");
    std::ofstream(*dir_ / "empty.txt") << "# no library yet\n\n";
    std::string text;
    run_rc_ = hangbench(
        "run --matrix " + kMatrices + "small.toml --out " + (*dir_ / "runs" / "small").string() + " --progress none",
        &text);
    run_log_ = new std::string(text);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete run_log_;
  }

 protected:
  static fs::path* dir_;
  static int run_rc_;
  static std::string* run_log_;
};

fs::path* CliErrors::dir_ = nullptr;
int CliErrors::run_rc_ = -1;
std::string* CliErrors::run_log_ = nullptr;

TEST_P(CliErrors, ExitCodeAndMessagePointToTheFix) {
  ASSERT_TRUE(run_rc_ == 0 || run_rc_ == 1) << *run_log_;
  const ErrorCase& c = GetParam();
  std::string text;
  EXPECT_EQ(hangbench(with_dir(c.args, dir_->string()), &text), c.exit_code) << text;
  for (const auto& says : c.says) EXPECT_NE(text.find(with_dir(says, dir_->string())), std::string::npos) << text;
  for (const auto& never : c.never_says) EXPECT_EQ(text.find(never), std::string::npos) << never << " in:\n" << text;
}

INSTANTIATE_TEST_SUITE_P(Table, CliErrors, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

}  // namespace
