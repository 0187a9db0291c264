// MultiState: a client's MULTI component -- the commands queued since MULTI,
// and whether one of them was refused (EXEC then answers EXECABORT).
// Created by MULTI, destroyed by EXEC, DISCARD, RESET or the client closing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringkv::server {

struct CommandSpec;

struct QueuedCommand {
  const CommandSpec* spec;
  std::vector<std::string> argv;
};

struct MultiState {
  std::vector<QueuedCommand> commands;
  bool aborted = false;    // a queued command was refused (EXECABORT)
  uint32_t flags = 0;      // union of the queued commands' flags (CLIENT PAUSE WRITE)
  uint32_t inv_flags = 0;  // union of their missing flags: one not `stale` makes EXEC not stale
  size_t bytes = 0;        // argument bytes held (CLIENT LIST multi-mem)
};

}  // namespace ringkv::server
