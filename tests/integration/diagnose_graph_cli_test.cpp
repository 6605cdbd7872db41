// `hangbench diagnose --json --dot` on a live hang no rule was written for: two
// threads of a forked child, each holding the mutex the other wants. The JSON
// carries the graph and the finding names exactly those two threads; the DOT file
// draws the stuck part in red.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

namespace {

pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER, second = PTHREAD_MUTEX_INITIALIZER;
pthread_barrier_t both_hold;
int report_fd = -1;

void* take(pthread_mutex_t* mine, pthread_mutex_t* theirs) {
  pthread_mutex_lock(mine);
  int tid = static_cast<int>(::syscall(SYS_gettid));
  if (::write(report_fd, &tid, sizeof tid) != static_cast<ssize_t>(sizeof tid)) ::_exit(3);
  pthread_barrier_wait(&both_hold);
  pthread_mutex_lock(theirs);  // never returns
  return nullptr;
}
void* take_first(void*) { return take(&first, &second); }
void* take_second(void*) { return take(&second, &first); }

std::string run(const std::string& command) {
  std::string out;
  std::array<char, 4096> buf{};
  FILE* p = ::popen(command.c_str(), "r");
  while (p && std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  if (p) ::pclose(p);
  return out;
}

TEST(DiagnoseGraphCli, TwoThreadsOnTwoMutexesAreOneRingInJsonAndDot) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    report_fd = pipe_fds[1];
    pthread_barrier_init(&both_hold, nullptr, 2);
    pthread_t a, b;
    pthread_create(&a, nullptr, take_first, nullptr);
    pthread_create(&b, nullptr, take_second, nullptr);
    pthread_join(a, nullptr);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int tids[2] = {0, 0};
  ASSERT_EQ(::read(pipe_fds[0], &tids[0], sizeof(int)), static_cast<ssize_t>(sizeof(int)));
  ASSERT_EQ(::read(pipe_fds[0], &tids[1], sizeof(int)), static_cast<ssize_t>(sizeof(int)));
  ::usleep(300 * 1000);  // both now asleep in the second lock

  const auto dir = std::filesystem::temp_directory_path() / ("hb-graph-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string binary = std::string(HB_BINARY_DIR) + "/harness/hangbench";
  const std::string dot = (dir / "graph.dot").string();
  std::string json_text = run(binary + " diagnose " + std::to_string(child) + " --stacks --json --dot " + dot);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);

  auto j = nlohmann::json::parse(json_text);
  ASSERT_TRUE(j.contains("graph"));
  EXPECT_GE(j["graph"]["nodes"].size(), 4u);
  const nlohmann::json* ring = nullptr;
  for (const auto& f : j["findings"])
    if (f["rule"] == "wait-cycle") ring = &f;
  ASSERT_NE(ring, nullptr) << json_text.substr(0, 4000);
  EXPECT_EQ((*ring)["severity"], "hang");
  EXPECT_THAT((*ring)["tids"].get<std::vector<int>>(), UnorderedElementsAre(tids[0], tids[1]));
  EXPECT_THAT((*ring)["pids"].get<std::vector<int>>(), UnorderedElementsAre(child));
  // The headline's facts as fields: who waits, who holds it (the ring is one process), what to do.
  EXPECT_EQ((*ring)["waiter"]["pid"], child);
  EXPECT_TRUE((*ring)["waiter"]["tid"] == tids[0] || (*ring)["waiter"]["tid"] == tids[1]);
  EXPECT_TRUE((*ring)["holders"].empty());
  EXPECT_TRUE((*ring)["remedies"].is_array());
  EXPECT_THAT(j["headline"][0].get<std::string>(), HasSubstr("HANG     threads that wait for each other in a ring"));

  std::ifstream in(dot);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("digraph waits_for"));
  EXPECT_THAT(text.str(), HasSubstr("color=red"));
  EXPECT_THAT(text.str(), HasSubstr("pthread_mutex_lock"));
  std::filesystem::remove_all(dir);
}

}  // namespace
