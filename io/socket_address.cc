// SocketAddress (io/connection.h): conversions from the kernel's socket
// addresses and the renderings CLIENT LIST & co. show.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "io/connection.h"

namespace ringkv::io {

SocketAddress SocketAddress::FromSockaddr(const sockaddr_storage& ss, const std::string* unix_path) {
  SocketAddress a;
  if (ss.ss_family == AF_UNIX) return SocketAddress::Unix(unix_path);
  if (ss.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    a.family = AF_INET;
    a.port = ntohs(in->sin_port);
    std::memcpy(a.addr, &in->sin_addr, 4);
  } else if (ss.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    a.family = AF_INET6;
    a.port = ntohs(in6->sin6_port);
    std::memcpy(a.addr, &in6->sin6_addr, 16);
  }
  return a;
}

SocketAddress SocketAddress::Unix(const std::string* path) {
  SocketAddress a;
  a.family = AF_UNIX;
  std::memcpy(a.addr, &path, sizeof(path));
  return a;
}

std::string SocketAddress::ToString() const {
  if (family == AF_UNIX) {  // as Redis: the socket's path, port 0
    const std::string* path = nullptr;
    std::memcpy(&path, addr, sizeof(path));
    return absl::StrCat(path != nullptr ? *path : std::string(), ":0");
  }
  char host[INET6_ADDRSTRLEN] = "?";
  if (family == AF_INET || family == AF_INET6) inet_ntop(family, addr, host, sizeof(host));
  return absl::StrCat(host, ":", port);
}

std::string SocketAddress::Ip() const {
  char host[INET6_ADDRSTRLEN] = "";
  if (family == AF_INET || family == AF_INET6) inet_ntop(family, addr, host, sizeof(host));
  return host;
}

bool SocketAddress::IsLoopback() const {
  if (family == AF_INET) return addr[0] == 127;
  if (family == AF_INET6) {
    static const uint8_t kLoop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(addr, kLoop6, 16) == 0 || (std::memcmp(addr, kMapped, 12) == 0 && addr[12] == 127);
  }
  return true;  // unix sockets count as local
}

SocketAddress LocalAddress(const Connection& conn, const std::string* unix_path) {
  // Asked when shown (CLIENT LIST, CLIENT KILL LADDR) rather than kept: 20
  // bytes less for every connection, one syscall per listing instead of one
  // per accept. Another I/O thread may have closed the socket already (its
  // close is then on its way to the main thread): unknown.
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (conn.fd < 0 || getsockname(conn.fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return SocketAddress{};
  return SocketAddress::FromSockaddr(ss, unix_path);
}

}  // namespace ringkv::io
