// The intruder against a listener of the test's own, as NCCL's bootstrap root would see
// it (no GPU, no NCCL), and the root address read from a unique id laid out as NCCL's.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "intruder.hpp"
#include "root_address.hpp"

namespace hangbench::nccl_bootstrap_silent {
namespace {

nccl_abi::ncclUniqueId id_with(const void* address, size_t size) {
  nccl_abi::ncclUniqueId id{};
  std::memset(id.internal, 0x11, 8);  // the magic
  std::memcpy(id.internal + 8, address, size);
  return id;
}

TEST(RootAddress, ReadsTheIpv4AddressAfterTheMagic) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(41235);
  ::inet_pton(AF_INET, "10.1.2.3", &in.sin_addr);
  const auto root = root_address_of(id_with(&in, sizeof in));
  ASSERT_TRUE(root);
  EXPECT_EQ(root->text, "10.1.2.3:41235");
  EXPECT_EQ(root->length, sizeof in);
}

TEST(RootAddress, ReadsAnIpv6Address) {
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(5000);
  ::inet_pton(AF_INET6, "::1", &in6.sin6_addr);
  const auto root = root_address_of(id_with(&in6, sizeof in6));
  ASSERT_TRUE(root);
  EXPECT_EQ(root->text, "[::1]:5000");
}

TEST(RootAddress, AnIdWithoutASocketAddressHasNone) {
  nccl_abi::ncclUniqueId id{};
  std::memset(id.internal, 0x5A, sizeof id.internal);  // the stand-in NCCL's id
  EXPECT_FALSE(root_address_of(id));
  sockaddr_in no_port{};
  no_port.sin_family = AF_INET;
  EXPECT_FALSE(root_address_of(id_with(&no_port, sizeof no_port)));
}

// A listener on loopback, standing in for the bootstrap root.
struct Listener {
  int fd = -1;
  RootAddress address;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&in), sizeof in), 0);
    EXPECT_EQ(::listen(fd, 4), 0);
    socklen_t len = sizeof in;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&in), &len);
    address = *root_address_of(id_with(&in, sizeof in));
  }
  ~Listener() { ::close(fd); }
  int accept_one() { return ::accept(fd, nullptr, nullptr); }
};

// Bytes readable within `ms`: -1 when nothing came, 0 at end of stream.
ssize_t read_within(int fd, char* buffer, size_t size, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, ms) != 1) return -1;
  return ::read(fd, buffer, size);
}

std::string comm_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST(Intruder, SilentConnectsSaysNothingAndHoldsNoneOfTheJobsDescriptors) {
  Listener root;
  const pid_t pid = start_intruder(root.address, IntruderMode::Silent);
  const int accepted = root.accept_one();
  ASSERT_GE(accepted, 0);
  char buffer[16];
  EXPECT_EQ(read_within(accepted, buffer, sizeof buffer, 300), -1) << "the silent intruder sent something";
  EXPECT_EQ(comm_of(pid), "hb-intruder");
  // Its descriptors: 0-2 and the connection, not the listener it was forked beside.
  int descriptors = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    (void)entry;
    ++descriptors;
  }
  EXPECT_LE(descriptors, 4);
  kill_and_reap(pid);
  ::close(accepted);
}

TEST(Intruder, WrongMagicSendsEightBytesThatAreNotNcclsThenStays) {
  Listener root;
  const pid_t pid = start_intruder(root.address, IntruderMode::WrongMagic);
  const int accepted = root.accept_one();
  char buffer[16] = {};
  ASSERT_EQ(read_within(accepted, buffer, sizeof buffer, 2000), 8);
  EXPECT_EQ(std::string(buffer, 8), "hangbenc");
  EXPECT_EQ(read_within(accepted, buffer, sizeof buffer, 200), -1) << "it should stay connected and silent";
  kill_and_reap(pid);
  ::close(accepted);
}

TEST(Intruder, ClosedConnectsClosesAndIsGoneWhenItReturns) {
  Listener root;
  const pid_t pid = start_intruder(root.address, IntruderMode::Closed);
  EXPECT_NE(::kill(pid, 0), 0) << "the closed intruder should have exited and been reaped";
  const int accepted = root.accept_one();
  char buffer[16];
  EXPECT_EQ(read_within(accepted, buffer, sizeof buffer, 2000), 0) << "end of stream before any byte";
  ::close(accepted);
}

TEST(Intruder, ARootThatDoesNotListenIsAnErrorNamingIt) {
  RootAddress nowhere;
  {
    Listener gone;
    nowhere = gone.address;
  }  // closed: the port refuses
  try {
    start_intruder(nowhere, IntruderMode::Silent);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(nowhere.text), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hangbench::nccl_bootstrap_silent
