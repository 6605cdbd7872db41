// CPython's layouts as diagnose reads them (python_layout.cpp over the generated
// python_layouts_generated.inc): the values are those typed by hand before the file was
// generated, field by field; 3.13's _Py_DebugOffsets is read slot by slot as before; and
// ci/gen_python_layouts.py, run again over every CPython's headers on this machine,
// writes the committed file byte for byte.
#include "inspect/python_layout.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace hangbench::diagnose;
namespace fs = std::filesystem;

namespace {

// python_layout.cpp's hand-typed offsets as they stood before the generated table (commit 35d8278).
PythonLayout hand_typed(int minor) {
  PythonLayout l;
  l.minor = minor;
  l.unicode_length = 16;
  l.unicode_state = 32;
  l.bytes_size = 16;
  l.bytes_data = 32;
  if (minor == 9 || minor == 10) {
    l.runtime_interpreters_head = 32;
    l.interp_threads_head = 8;
    l.gil_base = PythonLayout::GilBase::Runtime;
    l.gil_holder = 360;
    l.gil_locked = 368;
    l.tstate_next = 8;
    l.tstate_pthread = 176;
    l.tstate_frame = 24;
    l.frame_previous = 24;
    l.frame_code = 32;
    l.frame_trace = minor == 9 ? 80 : PythonLayout::kNone;
    l.frame_lasti = minor == 9 ? 104 : 96;
    l.frame_lineno = minor == 9 ? 108 : 100;
    l.lasti_unit = minor == 9 ? 1 : 2;
    l.line_table = minor == 9 ? PythonLayout::LineTable::Lnotab : PythonLayout::LineTable::Linetable310;
    l.code_firstlineno = 40;
    l.code_filename = 104;
    l.code_name = 112;
    l.code_qualname = 112;
    l.code_linetable = 120;
    l.ascii_size = 48;
    l.compact_size = 72;
  } else if (minor == 11) {
    l.runtime_interpreters_head = 40;
    l.interp_threads_head = 16;
    l.gil_base = PythonLayout::GilBase::Runtime;
    l.gil_holder = 368;
    l.gil_locked = 376;
    l.tstate_next = 8;
    l.tstate_native_thread_id = 160;
    l.tstate_cframe = 56;
    l.cframe_current_frame = 8;
    l.frame_code = 32;
    l.frame_previous = 48;
    l.frame_instr = 56;
    l.frame_owner = 69;
    l.frame_is_entry = 68;
    l.code_filename = 112;
    l.code_name = 120;
    l.code_qualname = 128;
    l.code_linetable = 136;
    l.code_firstlineno = 72;
    l.code_adaptive = 184;
    l.ascii_size = 48;
    l.compact_size = 72;
  } else if (minor == 12) {
    l.runtime_interpreters_head = 40;
    l.interp_threads_head = 72;
    l.gil_base = PythonLayout::GilBase::InterpreterPointer;
    l.gil_pointer = 384;
    l.gil_holder = 8;
    l.gil_locked = 16;
    l.tstate_next = 8;
    l.tstate_native_thread_id = 144;
    l.tstate_cframe = 56;
    l.frame_previous = 8;
    l.frame_instr = 56;
    l.frame_owner = 70;
    l.code_filename = 112;
    l.code_name = 120;
    l.code_qualname = 128;
    l.code_linetable = 136;
    l.code_firstlineno = 68;
    l.code_adaptive = 192;
    l.ascii_size = 40;
    l.compact_size = 56;
  }
  return l;
}

// Every field of PythonLayout, named in the failure.
void expect_same(const PythonLayout& got, const PythonLayout& want) {
#define HB_SAME(field) EXPECT_EQ(got.field, want.field) << #field " of 3." << want.minor
  HB_SAME(minor);
  HB_SAME(runtime_interpreters_head);
  HB_SAME(interp_next);
  HB_SAME(interp_threads_head);
  HB_SAME(gil_base);
  HB_SAME(gil_pointer);
  HB_SAME(gil_holder);
  HB_SAME(gil_locked);
  HB_SAME(tstate_next);
  HB_SAME(tstate_native_thread_id);
  HB_SAME(tstate_pthread);
  HB_SAME(tstate_frame);
  HB_SAME(tstate_cframe);
  HB_SAME(cframe_current_frame);
  HB_SAME(tstate_current_frame);
  HB_SAME(frame_code);
  HB_SAME(frame_previous);
  HB_SAME(frame_instr);
  HB_SAME(frame_owner);
  HB_SAME(frame_is_entry);
  HB_SAME(instr_is_next);
  HB_SAME(line_table);
  HB_SAME(frame_lasti);
  HB_SAME(frame_lineno);
  HB_SAME(frame_trace);
  HB_SAME(lasti_unit);
  HB_SAME(code_filename);
  HB_SAME(code_name);
  HB_SAME(code_qualname);
  HB_SAME(code_linetable);
  HB_SAME(code_firstlineno);
  HB_SAME(code_adaptive);
  HB_SAME(unicode_length);
  HB_SAME(unicode_state);
  HB_SAME(ascii_size);
  HB_SAME(compact_size);
  HB_SAME(bytes_size);
  HB_SAME(bytes_data);
#undef HB_SAME
}

// A _PyRuntime prefix as 3.13 writes it, each 8-byte slot after the cookie holding
// 1000 + its offset, so that a field read from the wrong slot shows.
std::string debug_offsets_image(std::uint64_t free_threaded = 0) {
  std::string bytes(kDebugOffsetsBytes, '\0');
  for (std::size_t at = 8; at + 8 <= bytes.size(); at += 8) {
    std::uint64_t v = at == 16 ? free_threaded : 1000 + at;
    std::memcpy(bytes.data() + at, &v, sizeof v);
  }
  std::memcpy(bytes.data(), "xdebugpy", 8);
  return bytes;
}

struct CommandResult {
  int status = -1;
  std::string output;
};

// Runs `command` through the shell, stdout and stderr together.
CommandResult run(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer;
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) r.output.append(buffer.data(), n);
  int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

const std::string kScript = std::string(HB_SOURCE_DIR) + "/ci/gen_python_layouts.py";
const std::string kCommitted = std::string(HB_SOURCE_DIR) + "/harness/src/inspect/python_layouts_generated.inc";
const std::string kSystemPython311 = "/usr/include/python3.11";

// The include trees of this machine to regenerate from: Debian 12's 3.11 (required) and the
// 3.9 and 3.13 that ci/setup.sh has ci/fetch_old_pythons.sh unpack inside the checkout (so
// that the generated file names the same tree on every machine).
std::vector<std::string> include_dirs_at_hand() {
  std::vector<std::string> dirs{kSystemPython311};
  const fs::path old_pythons = fs::path(HB_SOURCE_DIR) / ".cache" / "old-pythons";
  for (std::string version : {"3.9", "3.13"}) {
    fs::path dir = old_pythons / version / "usr" / "include" / ("python" + version);
    if (fs::exists(dir / "internal")) dirs.push_back(dir.string());
  }
  return dirs;
}

std::string check_command(const std::string& committed, const std::vector<std::string>& dirs) {
  std::string command = "python3 " + quoted(kScript) + " --check " + quoted(committed);
  for (const auto& dir : dirs) command += " " + quoted(dir);
  return command;
}

}  // namespace

TEST(PythonLayout, FixedLayoutsAreTheValuesTypedByHandBefore) {
  for (int minor : {9, 10, 11, 12}) {
    auto layout = fixed_python_layout(3, minor);
    ASSERT_TRUE(layout.has_value()) << "3." << minor;
    expect_same(*layout, hand_typed(minor));
  }
}

TEST(PythonLayout, OtherVersionsHaveNoFixedLayout) {
  EXPECT_FALSE(fixed_python_layout(3, 8).has_value());
  EXPECT_FALSE(fixed_python_layout(3, 13).has_value());
  EXPECT_FALSE(fixed_python_layout(2, 7).has_value());
}

TEST(PythonLayout, DebugOffsetsAreReadFromTheSlotsOf313) {
  std::string why;
  auto layout = layout_from_debug_offsets(debug_offsets_image(), 13, why);
  ASSERT_TRUE(layout.has_value()) << why;
  // The byte offsets in _Py_DebugOffsets that the reader used before it read them by name.
  PythonLayout want;
  want.minor = 13;
  want.runtime_interpreters_head = 1040;
  want.interp_next = 1064;
  want.interp_threads_head = 1072;
  want.gil_base = PythonLayout::GilBase::Interpreter;
  want.gil_locked = 1136;
  want.gil_holder = 1144;
  want.tstate_next = 1168;
  want.tstate_current_frame = 1184;
  want.tstate_native_thread_id = 1200;
  want.frame_previous = 1232;
  want.frame_code = 1240;
  want.frame_instr = 1248;
  want.frame_owner = 1264;
  want.instr_is_next = true;
  want.code_filename = 1280;
  want.code_name = 1288;
  want.code_qualname = 1296;
  want.code_linetable = 1304;
  want.code_firstlineno = 1312;
  want.code_adaptive = 1344;
  want.bytes_size = 1520;
  want.bytes_data = 1528;
  want.unicode_state = 1544;
  want.unicode_length = 1552;
  want.ascii_size = 1560;
  want.compact_size = 1560 + 16;
  expect_same(*layout, want);
}

TEST(PythonLayout, DebugOffsetsRefuseAFreeThreadedBuildAndAMissingCookie) {
  std::string why;
  EXPECT_FALSE(layout_from_debug_offsets(debug_offsets_image(1), 13, why).has_value());
  EXPECT_THAT(why, ::testing::HasSubstr("free-threaded"));
  std::string no_cookie = debug_offsets_image();
  no_cookie[0] = 'y';
  EXPECT_FALSE(layout_from_debug_offsets(no_cookie, 13, why).has_value());
  EXPECT_THAT(why, ::testing::HasSubstr("cookie"));
  EXPECT_FALSE(layout_from_debug_offsets(debug_offsets_image().substr(0, 64), 13, why).has_value());
}

TEST(PythonLayoutsGenerated, RegeneratedFromTheHeadersAtHandMatchTheCommittedFile) {
  ASSERT_TRUE(fs::exists(kSystemPython311 + "/internal/pycore_runtime.h"))
      << "no CPython 3.11 headers at " << kSystemPython311
      << ": run ci/setup.sh (Debian 12's python3-dev has them); ci/gen_python_layouts.py needs them";
  std::vector<std::string> dirs = include_dirs_at_hand();
  CommandResult r = run(check_command(kCommitted, dirs));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("matches the headers of"));
  std::string versions;
  for (const auto& dir : dirs) versions += " " + dir;
  RecordProperty("regenerated_from", versions);
  std::printf("regenerated from:%s\n", versions.c_str());
}

TEST(PythonLayoutsGenerated, ACommittedValueTheHeadersDoNotGiveFails) {
  ASSERT_TRUE(fs::exists(kSystemPython311 + "/internal/pycore_runtime.h"))
      << "no CPython 3.11 headers at " << kSystemPython311 << ": run ci/setup.sh";
  std::ifstream in(kCommitted);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // 3.11's PyThreadState.native_thread_id, one byte off.
  const std::string good = "    .tstate_native_thread_id = 160,";
  auto at = text.find(good);
  ASSERT_NE(at, std::string::npos) << "the 3.11 row names no tstate_native_thread_id = 160";
  text.replace(at, good.size(), "    .tstate_native_thread_id = 161,");
  fs::path altered = fs::temp_directory_path() / ("python_layouts_altered_" + std::to_string(::getpid()) + ".inc");
  std::ofstream(altered) << text;
  CommandResult r = run(check_command(altered.string(), {kSystemPython311}));
  fs::remove(altered);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("+    .tstate_native_thread_id = 160,"));
}
