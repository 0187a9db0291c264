#include "server/supervision.h"

#include <signal.h>
#include <systemd/sd-daemon.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "core/strings.h"
#include "server/logging.h"

namespace ringkv::server {
namespace {

Supervision g_mode = Supervision::kNone;
bool g_ready_sent = false;

// One sd_notify datagram; false when it could not be sent.
bool Send(const std::string& state) { return sd_notify(0, state.c_str()) > 0; }

bool SetUpSystemd() {
  if (std::getenv("NOTIFY_SOCKET") == nullptr) {
    Log(kWarning, "systemd supervision error: NOTIFY_SOCKET not found!");
    return false;
  }
  if (!Send("STATUS=ringkv is loading...\n")) {
    Log(kWarning, "systemd supervision error: sd_notify could not reach NOTIFY_SOCKET");
    return false;
  }
  Log(kNotice,
      "Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and "
      "TimeoutStopSec in your service unit.");
  return true;
}

bool SetUpUpstart() {
  if (std::getenv("UPSTART_JOB") == nullptr) {
    Log(kWarning, "upstart supervision requested, but UPSTART_JOB not found!");
    return false;
  }
  Log(kNotice, "supervised by upstart, will stop to signal readiness.");
  return true;
}

}  // namespace

Supervision SetUpSupervision(std::string_view configured) {
  Supervision want = Supervision::kNone;
  if (configured == "systemd") {
    want = Supervision::kSystemd;
  } else if (configured == "upstart") {
    want = Supervision::kUpstart;
  } else if (configured == "auto") {
    if (std::getenv("UPSTART_JOB") != nullptr) {
      want = Supervision::kUpstart;
    } else if (std::getenv("NOTIFY_SOCKET") != nullptr) {
      want = Supervision::kSystemd;
    }
  }
  if (want == Supervision::kSystemd && !SetUpSystemd()) want = Supervision::kNone;
  if (want == Supervision::kUpstart && !SetUpUpstart()) want = Supervision::kNone;
  g_mode = want;
  return g_mode;
}

Supervision CurrentSupervision() { return g_mode; }

void NotifyReady(bool replica) {
  if (g_ready_sent) return;
  g_ready_sent = true;
  if (g_mode == Supervision::kUpstart) {
    raise(SIGSTOP);
    unsetenv("UPSTART_JOB");
    return;
  }
  if (g_mode != Supervision::kSystemd) return;
  Send(replica ? "STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA sync\n"
               : "STATUS=Ready to accept connections\n");
  Send("READY=1\n");
}

void NotifyStatus(std::string_view status) {
  if (g_mode == Supervision::kSystemd) Send(StrCat("STATUS=", status, "\n"));
}

void NotifyLoading(uint64_t loaded_bytes) {
  if (g_mode != Supervision::kSystemd || g_ready_sent) return;
  static std::chrono::steady_clock::time_point last;
  const auto now = std::chrono::steady_clock::now();
  if (now - last < std::chrono::seconds(1)) return;
  last = now;
  Send(StrCat("STATUS=Loading the dataset: ", loaded_bytes, " bytes loaded\n"));
}

void NotifyStopping() {
  if (g_mode == Supervision::kSystemd) Send("STOPPING=1\n");
}

}  // namespace ringkv::server
