// The keys of a call with the access flags of their key specs (RO, RW, OW,
// RM; access, update, insert, delete), as Redis's getKeysFromCommandWithSpecs
// reports them: COMMAND GETKEYSANDFLAGS and the ACL key check.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "server/command.h"

namespace ringkv::server {

struct KeyWithFlags {
  enum : uint8_t { kRead = 1, kWrite = 2 };
  size_t pos;              // index in args
  std::string_view key;    // a view into args
  std::string_view flags;  // "RW,access,update"
  // What ACL asks of the key: read (access), write (insert, update, delete).
  uint8_t perms;
};

// `args`: the whole call (args[0] is the command's name). Empty for a command
// without keys or with arguments that name none.
std::vector<KeyWithFlags> KeysWithFlags(const CommandSpec& c, Argv args);
// The same for keys already found (views into args).
std::vector<KeyWithFlags> KeysWithFlags(const CommandSpec& c, Argv args, const std::vector<std::string_view>& keys);

}  // namespace ringkv::server
