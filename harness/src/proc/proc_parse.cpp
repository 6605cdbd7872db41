// Pure parsers of /proc text: no I/O here, so tests can feed fixture snapshots.
#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "hangbench/proc.hpp"

namespace hangbench::proc {

std::optional<StatFields> parse_stat(const std::string& line) {
  // comm may hold spaces and parentheses: it ends at the LAST ')'.
  auto open = line.find('(');
  auto close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  StatFields s;
  try {
    s.pid = std::stoi(line.substr(0, open));
  } catch (...) {
    return std::nullopt;
  }
  s.comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> f;  // f[0] is field 3 (state)
  for (std::string tok; rest >> tok;) f.push_back(tok);
  if (f.size() < 20) return std::nullopt;
  try {
    s.state = f[0].empty() ? '?' : f[0][0];
    s.ppid = std::stoi(f[1]);
    s.pgid = std::stoi(f[2]);
    s.sid = std::stoi(f[3]);
    s.num_threads = std::stoi(f[17]);    // field 20
    s.start_ticks = std::stoull(f[19]);  // field 22
  } catch (...) {
    return std::nullopt;
  }
  return s;
}

std::string state_name(char state) {
  switch (state) {
    case 'R':
      return "running";
    case 'S':
      return "sleeping";
    case 'D':
      return "disk sleep";
    case 'T':
      return "stopped";
    case 't':
      return "tracing stop";
    case 'Z':
      return "zombie";
    case 'X':
      return "dead";
    case 'I':
      return "idle";
    case 'P':
      return "parked";
    default:
      return "unknown";
  }
}

std::int64_t parse_boot_time(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) {
      try {
        return std::stoll(line.substr(6));
      } catch (...) {
        return 0;
      }
    }
  }
  return 0;
}

SyscallLine parse_syscall(const std::string& line) {
  SyscallLine s;
  std::istringstream in(line);
  std::string first;
  if (!(in >> first)) return s;
  if (first == "running") {
    s.kind = SyscallLine::Kind::Running;
    return s;
  }
  try {
    s.number = std::stol(first);
  } catch (...) {
    return s;
  }
  if (s.number < 0) {  // "-1 SP PC": blocked, but not in a system call
    s.kind = SyscallLine::Kind::NotInSyscall;
    return s;
  }
  s.kind = SyscallLine::Kind::InSyscall;
  for (std::string tok; s.args.size() < 6 && in >> tok;) {
    try {
      s.args.push_back(std::stoull(tok, nullptr, 16));
    } catch (...) {
      break;
    }
  }
  return s;
}

FdTarget parse_fd_link(const std::string& link) {
  FdTarget t;
  auto bracket_inode = [&](std::size_t prefix) -> std::uint64_t {
    auto end = link.find(']', prefix);
    if (end == std::string::npos) return 0;
    try {
      return std::stoull(link.substr(prefix, end - prefix));
    } catch (...) {
      return 0;
    }
  };
  if (link.rfind("socket:[", 0) == 0) {
    t.kind = DescriptorKind::Socket;
    t.inode = bracket_inode(8);
  } else if (link.rfind("pipe:[", 0) == 0) {
    t.kind = DescriptorKind::Pipe;
    t.inode = bracket_inode(6);
  } else if (link.rfind("anon_inode:", 0) == 0) {
    t.kind = DescriptorKind::AnonInode;
  } else if (!link.empty() && link[0] == '/') {
    t.kind = DescriptorKind::File;
  }
  return t;
}

std::string to_string(DescriptorKind k) {
  switch (k) {
    case DescriptorKind::Socket:
      return "socket";
    case DescriptorKind::Pipe:
      return "pipe";
    case DescriptorKind::AnonInode:
      return "anon_inode";
    case DescriptorKind::File:
      return "file";
    default:
      return "other";
  }
}

int parse_fdinfo_flags(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags:", 0) == 0) {
      try {
        return static_cast<int>(std::stol(line.substr(6), nullptr, 8));
      } catch (...) {
        return -1;
      }
    }
  }
  return -1;
}

std::vector<int> parse_epoll_targets(const std::string& text) {
  std::vector<int> fds;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("tfd:", 0) == 0) {
      try {
        fds.push_back(std::stoi(line.substr(4)));
      } catch (...) {
      }
    }
  }
  return fds;
}

std::string tcp_state_name(int code) {
  static const char* names[] = {"UNKNOWN",   "ESTABLISHED", "SYN_SENT",    "SYN_RECV",   "FIN_WAIT1",
                                "FIN_WAIT2", "TIME_WAIT",   "CLOSE",       "CLOSE_WAIT", "LAST_ACK",
                                "LISTEN",    "CLOSING",     "NEW_SYN_RECV"};
  if (code >= 1 && code <= 12) return names[code];
  return "UNKNOWN";
}

namespace {

// "0100007F:1F90" (v4) or 32 hex digits + port (v6), as the kernel prints them:
// each 32-bit word in host (little-endian) order.
std::string decode_address(const std::string& hex, bool ipv6) {
  auto colon = hex.find(':');
  if (colon == std::string::npos) return hex;
  unsigned port = 0;
  std::sscanf(hex.c_str() + colon + 1, "%x", &port);
  std::string addr_hex = hex.substr(0, colon);
  char text[INET6_ADDRSTRLEN] = {0};
  if (!ipv6 && addr_hex.size() == 8) {
    std::uint32_t word = static_cast<std::uint32_t>(std::stoul(addr_hex, nullptr, 16));
    in_addr a{};
    a.s_addr = word;  // the kernel printed the raw network-order word in host order
    inet_ntop(AF_INET, &a, text, sizeof text);
    return std::string(text) + ":" + std::to_string(port);
  }
  if (ipv6 && addr_hex.size() == 32) {
    in6_addr a{};
    for (int w = 0; w < 4; ++w) {
      std::uint32_t word = static_cast<std::uint32_t>(std::stoul(addr_hex.substr(w * 8, 8), nullptr, 16));
      std::memcpy(a.s6_addr + w * 4, &word, 4);
    }
    inet_ntop(AF_INET6, &a, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(port);
  }
  return hex;
}

}  // namespace

std::vector<SocketEntry> parse_tcp_table(const std::string& text, bool ipv6) {
  std::vector<SocketEntry> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string slot, local, remote, st, queues, timer, retr, uid, timeout, inode;
    if (!(f >> slot >> local >> remote >> st >> queues >> timer >> retr >> uid >> timeout >> inode)) continue;
    SocketEntry e;
    e.protocol = ipv6 ? "tcp6" : "tcp";
    try {
      e.local = decode_address(local, ipv6);
      e.remote = decode_address(remote, ipv6);
      e.state = tcp_state_name(std::stoi(st, nullptr, 16));
      e.inode = std::stoull(inode);
    } catch (...) {
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<SocketEntry> parse_unix_table(const std::string& text) {
  // Num RefCount Protocol Flags Type St Inode [Path]
  std::vector<SocketEntry> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string num, refs, proto, flags, type, st, inode, path;
    if (!(f >> num >> refs >> proto >> flags >> type >> st >> inode)) continue;
    std::getline(f, path);
    path.erase(0, path.find_first_not_of(' '));
    SocketEntry e;
    e.protocol = "unix";
    try {
      e.inode = std::stoull(inode);
      int type_code = std::stoi(type, nullptr, 16);
      int state_code = std::stoi(st, nullptr, 16);
      long flag_bits = std::stol(flags, nullptr, 16);
      e.unix_type = type_code == 1 ? "STREAM" : type_code == 2 ? "DGRAM" : type_code == 5 ? "SEQPACKET" : "OTHER";
      if (flag_bits & 0x10000)
        e.state = "LISTEN";  // __SO_ACCEPTCON
      else
        e.state = state_code == 3   ? "CONNECTED"
                  : state_code == 1 ? "UNCONNECTED"
                  : state_code == 2 ? "CONNECTING"
                  : state_code == 4 ? "DISCONNECTING"
                                    : "UNKNOWN";
    } catch (...) {
      continue;
    }
    e.local = path;
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> parse_interesting_libraries(const std::string& maps_text) {
  static const char* patterns[] = {"libnccl", "libpython", "libmpi",   "libcuda.so", "libcudart",
                                   "libucp",  "libucs",    "libtorch", "libc10"};
  std::vector<std::string> libs;
  std::istringstream in(maps_text);
  for (std::string line; std::getline(in, line);) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (auto del = path.find(" (deleted)"); del != std::string::npos) path.erase(del);
    std::string base = path.substr(path.rfind('/') + 1);
    bool wanted =
        std::any_of(std::begin(patterns), std::end(patterns), [&](const char* p) { return base.rfind(p, 0) == 0; });
    if (wanted && std::find(libs.begin(), libs.end(), path) == libs.end()) libs.push_back(path);
  }
  return libs;
}

std::int64_t parse_context_switches(const std::string& status_text) {
  std::int64_t total = 0;
  int found = 0;
  std::istringstream in(status_text);
  std::string line;
  while (std::getline(in, line))
    for (const char* key : {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"})
      if (line.rfind(key, 0) == 0) {
        total += std::strtoll(line.c_str() + std::strlen(key), nullptr, 10);
        ++found;
      }
  return found == 2 ? total : -1;
}

}  // namespace hangbench::proc
