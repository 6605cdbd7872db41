// The kernel's view of a connection: /proc/net/tcp rows looked up by 4-tuple.
// Addresses there are hex in host byte order for IPv4 ("0100007F:98A7" is
// 127.0.0.1:39079 on little-endian machines); "st" is the TCP state number.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tcp_socket.hpp"

namespace socket_teardown {

struct TcpRow {
  Endpoint local;
  Endpoint remote;
  int state = 0;
  long inode = 0;
};

// Parses the text of /proc/net/tcp; the header and malformed lines are skipped.
std::vector<TcpRow> parse_proc_net_tcp(const std::string& text);

// "ESTABLISHED", "FIN_WAIT2", ... (the kernel's tcp_states.h names); "UNKNOWN(n)" otherwise.
std::string tcp_state_name(int state);

// The state of the row with exactly this local/remote pair, if any.
std::optional<std::string> find_tcp_state(const std::vector<TcpRow>& rows, const Endpoint& local,
                                          const Endpoint& remote);

// Reads /proc/net/tcp now and looks up the pair; "ABSENT" when no row matches.
std::string sample_tcp_state(const Endpoint& local, const Endpoint& remote);

}  // namespace socket_teardown
