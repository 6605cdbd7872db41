#include "tcp_state.hpp"

#include <arpa/inet.h>

#include <fstream>
#include <sstream>

namespace socket_teardown {
namespace {

// "0100007F:98A7": the address as the kernel's __be32 printed with %08X on this
// machine, i.e. network order read as a host integer; the port in host order.
std::optional<Endpoint> parse_endpoint(const std::string& field) {
  auto colon = field.find(':');
  if (colon != 8 || field.size() != 13) return std::nullopt;
  try {
    size_t used = 0;
    unsigned long raw_addr = std::stoul(field.substr(0, 8), &used, 16);
    if (used != 8) return std::nullopt;
    unsigned long port = std::stoul(field.substr(9), &used, 16);
    if (used != 4) return std::nullopt;
    return Endpoint{ntohl(static_cast<uint32_t>(raw_addr)), static_cast<uint16_t>(port)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<TcpRow> parse_proc_net_tcp(const std::string& text) {
  std::vector<TcpRow> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
    long inode = 0;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode)) {
      continue;  // the header, or a line we do not understand
    }
    auto l = parse_endpoint(local);
    auto r = parse_endpoint(remote);
    if (!l || !r || state.size() != 2) continue;
    try {
      rows.push_back(TcpRow{*l, *r, std::stoi(state, nullptr, 16), inode});
    } catch (const std::exception&) {
      continue;
    }
  }
  return rows;
}

std::string tcp_state_name(int state) {
  static const char* const kNames[] = {"",          "ESTABLISHED", "SYN_SENT",    "SYN_RECV",   "FIN_WAIT1",
                                       "FIN_WAIT2", "TIME_WAIT",   "CLOSE",       "CLOSE_WAIT", "LAST_ACK",
                                       "LISTEN",    "CLOSING",     "NEW_SYN_RECV"};
  if (state >= 1 && state <= 12) return kNames[state];
  return "UNKNOWN(" + std::to_string(state) + ")";
}

std::optional<std::string> find_tcp_state(const std::vector<TcpRow>& rows, const Endpoint& local,
                                          const Endpoint& remote) {
  for (const auto& row : rows) {
    if (row.local == local && row.remote == remote) return tcp_state_name(row.state);
  }
  return std::nullopt;
}

std::string sample_tcp_state(const Endpoint& local, const Endpoint& remote) {
  std::ifstream in("/proc/net/tcp");
  std::stringstream text;
  text << in.rdbuf();
  return find_tcp_state(parse_proc_net_tcp(text.str()), local, remote).value_or("ABSENT");
}

}  // namespace socket_teardown
