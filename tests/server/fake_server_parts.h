// Parts the component tests' fake servers share (tests/server/*_test.cc):
// setting a config parameter, clients whose connections no I/O thread runs,
// and the Persistence hooks of a server without an AOF, a fork child or a
// diskless transfer.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "io/connection.h"
#include "server/client.h"
#include "server/client_registry.h"
#include "server/config.h"
#include "server/persistence/persistence.h"

namespace ringkv::server::test_fakes {

// A fresh directory under /tmp that a test works in (the RDB and AOF files
// are relative to the working directory, as the server's are to `dir`).
// Declare it before what writes there: it is left and removed last.
class TempWorkingDir {
 public:
  TempWorkingDir() = default;
  TempWorkingDir(const TempWorkingDir&) = delete;
  TempWorkingDir& operator=(const TempWorkingDir&) = delete;
  ~TempWorkingDir() {
    if (dir_.empty()) return;
    std::error_code ignored;  // a destructor must not throw
    std::filesystem::current_path(old_cwd_, ignored);
    std::filesystem::remove_all(dir_, ignored);
  }
  // Makes /tmp/<prefix>XXXXXX and enters it; the test fails if it cannot
  // (call it as ASSERT_NO_FATAL_FAILURE(dir.Enter(...)) to stop there).
  void Enter(const std::string& prefix) {
    std::string tmpl = "/tmp/" + prefix + "XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    old_cwd_ = std::filesystem::current_path();
    dir_ = tmpl;
    std::filesystem::current_path(dir_);
  }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
  std::filesystem::path old_cwd_;
};

// `argv` in RESP, as a client sends it and an AOF file holds it.
inline std::string Resp(const std::vector<std::string>& argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// Sets a parameter as CONFIG SET would; the test fails if it is refused.
inline void Set(Config& config, const std::string& name, const std::string& value) {
  std::string error;
  ASSERT_TRUE(config.SetFromCommand({{name, value}}, &error)) << error;
}

// Client `id` with a connection of its own, kept in `conns`, which must
// outlive the clients (declare it first). AddFakeClient lists it in
// `clients` too.
inline std::unique_ptr<Client> MakeFakeClient(uint64_t id, std::vector<std::unique_ptr<io::Connection>>& conns) {
  auto conn = std::make_unique<io::Connection>();
  conn->id = id;
  auto c = std::make_unique<Client>();
  c->conn = conn.get();
  conns.push_back(std::move(conn));
  return c;
}
inline Client& AddFakeClient(uint64_t id, std::vector<std::unique_ptr<io::Connection>>& conns,
                             std::map<uint64_t, std::unique_ptr<Client>>& clients) {
  return *(clients[id] = MakeFakeClient(id, conns));
}

// The same, listed in a ClientRegistry (the components that borrow the
// server's registry: PubSub, Clients).
inline Client& AddFakeClient(uint64_t id, std::vector<std::unique_ptr<io::Connection>>& conns,
                             ClientRegistry& clients) {
  std::unique_ptr<Client> c = MakeFakeClient(id, conns);
  Client& ref = *c;
  clients.Add(std::move(c));
  return ref;
}

// Persistence::Hooks with nothing behind them: no AOF to fsync, no held
// replies, no fork child or diskless transfer. A fake server derives from
// this instead of Persistence::Hooks when its test does not persist.
class NoPersistenceHooks : public Persistence::Hooks {
 public:
  void SubmitFsync(int, uint32_t) override {}
  void DeliverHeldReplies(uint64_t, io::OutBuffer&) override {}
  void HeldRepliesReleased(uint64_t) override {}
  void WakeInUs(int64_t) override {}
  void OnAofDurable() override {}
  bool DisklessTransferRunning() override { return false; }
  void OnDisklessTransferExited(bool) override {}
  void AbortDisklessTransfer(std::string_view) override {}
  void OnRdbFileDone(bool) override {}
  void UnlinkInBackground(std::vector<std::string> paths) override {
    for (const std::string& p : paths) std::remove(p.c_str());
  }
};

}  // namespace ringkv::server::test_fakes
