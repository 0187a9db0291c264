// LoopbackAddress, and FreeLoopbackPort: a TCP port on 127.0.0.1 nobody uses
// now, for tests that start listeners. Dependency-free: unit and e2e tests include it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace ringkv::testing {

// 127.0.0.1:port (0: any port).
inline sockaddr_in LoopbackAddress(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// Whether a TCP socket could not bind 127.0.0.1:port now (EADDRINUSE):
// something listens there, or a connection uses it as its local port. With
// `as_server`, the socket binds as the servers do (SO_REUSEADDR), so a
// port held only by connections in TIME_WAIT (a test's own probe of a
// server that has exited) is not in use.
inline bool LoopbackPortInUse(int port, bool as_server = false) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (as_server) {
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  }
  sockaddr_in a = LoopbackAddress(port);
  const bool in_use = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 && errno == EADDRINUSE;
  close(fd);
  return in_use;
}

// The lowest port of the kernel's ephemeral range (ip_local_port_range).
inline int EphemeralPortsStart() {
  int low = 32768, high = 60999;
  if (FILE* f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (fscanf(f, "%d %d", &low, &high) != 2) low = 32768;
    fclose(f);
  }
  return low;
}

// A port picked at random below the ephemeral range, not the kernel's
// choice of an ephemeral port: the kernel hands those to outgoing
// connections too (the tests' clients, the servers' replication and bus
// links, other tests running beside), and one could take the port between
// this pick and the server's bind, which then fails. Tests running side by
// side may still pick the same port; a server whose start fails on a taken
// port is started again on another (TestServer, StartBusNode).
inline int FreeLoopbackPort() {
  static std::atomic<uint64_t> seed{static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^
                                    static_cast<uint64_t>(time(nullptr))};
  constexpr int kLowest = 10000;
  const int end = EphemeralPortsStart();
  for (int attempt = 0; end - kLowest >= 1000 && attempt < 100; ++attempt) {
    uint64_t x = seed.fetch_add(0x9E3779B97F4A7C15ull) + 0x9E3779B97F4A7C15ull;  // splitmix64
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    const int port = kLowest + static_cast<int>(x % static_cast<uint64_t>(end - kLowest));
    if (!LoopbackPortInUse(port)) return port;
  }
  // No room below the ephemeral range: the kernel's choice.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = LoopbackAddress(0);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace ringkv::testing
