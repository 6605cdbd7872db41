// Parsers of /proc text, fed fixture snapshots stored under tests/fixtures/evidence.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hangbench/proc.hpp"

namespace hp = hangbench::proc;

namespace {
std::string fixture(const std::string& name) {
  std::ifstream in(std::string(HB_FIXTURES_DIR) + "/evidence/" + name);
  EXPECT_TRUE(in) << "missing fixture " << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(EvidenceProcParse, StatWithSpacesAndParenthesesInComm) {
  auto s = hp::parse_stat(fixture("stat_parens.txt"));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->pid, 880);
  EXPECT_EQ(s->comm, "python3 (rank) 0");
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->ppid, 1);
  EXPECT_EQ(s->pgid, 880);
  EXPECT_EQ(s->sid, 880);
  EXPECT_EQ(s->num_threads, 3);
  EXPECT_EQ(s->start_ticks, 65496u);
}

TEST(EvidenceProcParse, StatOfAStoppedThreadNamedWithSpaces) {
  auto s = hp::parse_stat(fixture("stat_thread_stopped.txt"));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->comm, "NCCL Service 0");
  EXPECT_EQ(s->state, 'T');
  EXPECT_EQ(s->ppid, 880);
  EXPECT_EQ(hp::state_name(s->state), "stopped");
}

TEST(EvidenceProcParse, TruncatedOrGarbledStatIsRejected) {
  EXPECT_FALSE(hp::parse_stat("").has_value());
  EXPECT_FALSE(hp::parse_stat("12 (x) S 1 2").has_value());
  EXPECT_FALSE(hp::parse_stat("abc (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21").has_value());
}

TEST(EvidenceProcParse, BootTime) {
  EXPECT_EQ(hp::parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1764669600\nprocesses 9\n"), 1764669600);
  EXPECT_EQ(hp::parse_boot_time("cpu 1\n"), 0);
}

TEST(EvidenceProcParse, SyscallLinesAreDecoded) {
  auto poll = hp::parse_syscall(fixture("syscall_poll.txt"));
  EXPECT_EQ(poll.kind, hp::SyscallLine::Kind::InSyscall);
  EXPECT_EQ(poll.number, 7);
  ASSERT_EQ(poll.args.size(), 6u);
  EXPECT_EQ(poll.args[0], 0x7f3a2c000b70u);
  EXPECT_EQ(poll.args[1], 2u);
  EXPECT_EQ(poll.args[2], 500u);
  EXPECT_EQ(hp::syscall_name(poll.number), "poll");

  auto futex = hp::parse_syscall(fixture("syscall_futex.txt"));
  EXPECT_EQ(hp::syscall_name(futex.number), "futex");
  EXPECT_EQ(hp::parse_syscall(fixture("syscall_running.txt")).kind, hp::SyscallLine::Kind::Running);
  EXPECT_EQ(hp::parse_syscall(fixture("syscall_not_in_syscall.txt")).kind, hp::SyscallLine::Kind::NotInSyscall);
  EXPECT_EQ(hp::parse_syscall("").kind, hp::SyscallLine::Kind::Unknown);
}

TEST(EvidenceProcParse, SyscallNamesOfCommonBlockingCalls) {
  EXPECT_EQ(hp::syscall_name(0), "read");
  EXPECT_EQ(hp::syscall_name(45), "recvfrom");
  EXPECT_EQ(hp::syscall_name(232), "epoll_wait");
  EXPECT_EQ(hp::syscall_name(271), "ppoll");
  EXPECT_EQ(hp::syscall_name(230), "clock_nanosleep");
  EXPECT_EQ(hp::syscall_name(61), "wait4");
  EXPECT_EQ(hp::syscall_name(43), "accept");
  EXPECT_EQ(hp::syscall_name(9999), "syscall_9999");
}

TEST(EvidenceProcParse, TcpTableAddressesStatesAndInodes) {
  auto rows = hp::parse_tcp_table(fixture("tcp.txt"), false);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].local, "127.0.0.1:45678");
  EXPECT_EQ(rows[0].state, "LISTEN");
  EXPECT_EQ(rows[0].inode, 51001u);
  EXPECT_EQ(rows[1].local, "127.0.0.1:45678");
  EXPECT_EQ(rows[1].remote, "127.0.0.1:38412");
  EXPECT_EQ(rows[1].state, "ESTABLISHED");
  EXPECT_EQ(rows[2].local, "127.0.0.1:38412");
  EXPECT_EQ(rows[3].local, "192.0.2.2:50627");
  EXPECT_EQ(rows[3].remote, "192.0.2.2:50918");
  EXPECT_EQ(rows[4].state, "TIME_WAIT");
  EXPECT_EQ(rows[4].inode, 0u);
}

TEST(EvidenceProcParse, Tcp6TableIncludingMappedV4) {
  auto rows = hp::parse_tcp_table(fixture("tcp6.txt"), true);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].protocol, "tcp6");
  EXPECT_EQ(rows[0].local, "[::1]:22");
  EXPECT_EQ(rows[0].state, "LISTEN");
  EXPECT_EQ(rows[1].local, "[::ffff:127.0.0.1]:8080");
  EXPECT_EQ(rows[1].remote, "[::ffff:127.0.0.1]:54321");
  EXPECT_EQ(rows[1].inode, 7002u);
}

TEST(EvidenceProcParse, UnixTable) {
  auto rows = hp::parse_unix_table(fixture("unix.txt"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].state, "LISTEN");
  EXPECT_EQ(rows[0].local, "/run/hangbench/test.sock");
  EXPECT_EQ(rows[1].state, "CONNECTED");
  EXPECT_EQ(rows[1].unix_type, "STREAM");
  EXPECT_EQ(rows[1].local, "");
  EXPECT_EQ(rows[2].unix_type, "DGRAM");
  EXPECT_EQ(rows[2].local, "@abstract-name");
  EXPECT_EQ(rows[3].unix_type, "SEQPACKET");
  EXPECT_EQ(rows[3].local, "/tmp/with space.sock");
  EXPECT_EQ(rows[3].inode, 1062u);
}

TEST(EvidenceProcParse, FdLinks) {
  auto s = hp::parse_fd_link("socket:[51002]");
  EXPECT_EQ(s.kind, hp::DescriptorKind::Socket);
  EXPECT_EQ(s.inode, 51002u);
  auto p = hp::parse_fd_link("pipe:[123456]");
  EXPECT_EQ(p.kind, hp::DescriptorKind::Pipe);
  EXPECT_EQ(p.inode, 123456u);
  EXPECT_EQ(hp::parse_fd_link("anon_inode:[eventpoll]").kind, hp::DescriptorKind::AnonInode);
  EXPECT_EQ(hp::parse_fd_link("/dev/null").kind, hp::DescriptorKind::File);
  EXPECT_EQ(hp::parse_fd_link("socket:[").inode, 0u);
}

TEST(EvidenceProcParse, FdinfoFlagsAndEpollTargets) {
  EXPECT_EQ(hp::parse_fdinfo_flags(fixture("fdinfo_pipe_write.txt")) & O_ACCMODE, O_WRONLY);
  EXPECT_EQ(hp::parse_fdinfo_flags("pos: 0\n"), -1);
  EXPECT_EQ(hp::parse_epoll_targets(fixture("fdinfo_epoll.txt")), (std::vector<int>{5, 9}));
}

TEST(EvidenceProcParse, MapsKeepOnlyTheLibrariesThatMatterOnce) {
  auto libs = hp::parse_interesting_libraries(fixture("maps.txt"));
  EXPECT_EQ(libs,
            (std::vector<std::string>{
                "/opt/nccl/2.17.1/lib/libnccl.so.2.17.1", "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.2",
                "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04"}));
}

TEST(EvidenceProcParse, TcpStateNames) {
  EXPECT_EQ(hp::tcp_state_name(1), "ESTABLISHED");
  EXPECT_EQ(hp::tcp_state_name(8), "CLOSE_WAIT");
  EXPECT_EQ(hp::tcp_state_name(10), "LISTEN");
  EXPECT_EQ(hp::tcp_state_name(99), "UNKNOWN");
}
