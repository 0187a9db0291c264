#include "io/io_backend.h"

#include "io/epoll_backend.h"
#include "io/uring_backend.h"

namespace ringkv::io {

bool ParseBackendChoice(std::string_view name, BackendChoice* out) {
  if (name == "auto") {
    *out = BackendChoice::kAuto;
  } else if (name == "io_uring") {
    *out = BackendChoice::kIoUring;
  } else if (name == "epoll") {
    *out = BackendChoice::kEpoll;
  } else {
    return false;
  }
  return true;
}

std::unique_ptr<IoBackend> MakeBackend(BackendKind kind) {
  if (kind == BackendKind::kEpoll) return std::make_unique<EpollBackend>();
  return std::make_unique<UringBackend>();
}

}  // namespace ringkv::io
