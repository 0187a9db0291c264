// FunctionLibraries: the FUNCTION libraries loaded into a server (Redis 7.0
// functions), and their functions by name.
//
// A library is its code ("#!lua name=<lib>" + Lua), loaded into the
// functions' LuaEngine, which registers its functions. Loading is
// all-or-nothing: a library that fails to compile, registers nothing, or
// names a function another library has, leaves every library as it was.
// The engine, once created, lives as long as this object (FLUSH and
// RESTORE keep it), as Redis's Lua state for functions does.
//
// Thread-safety: main thread only. Owns the engine's callback references of
// its functions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "server/scripting/lua_engine.h"

namespace ringkv::server::scripting {

struct FunctionInfo {
  std::string name;
  std::string library;
  int callback_ref = 0;
  uint32_t flags = 0;  // ScriptFlag bits
  std::string description;
  bool has_description = false;
};

struct LibraryInfo {
  std::string name;
  std::string code;
  std::vector<std::string> functions;  // in registration order
  // Functions whose name another of this library's has in another case:
  // listed, never called (FCALL finds the first registered, as Redis finds
  // one of them). Their callback_ref is released.
  std::vector<FunctionInfo> shadowed;
};

// "#!lua name=<lib>" -- the library's metadata. Error texts as Redis.
struct LibraryMetadata {
  std::string engine;
  std::string name;
};
absl::StatusOr<LibraryMetadata> ParseLibraryMetadata(std::string_view code);

class FunctionLibraries {
 public:
  explicit FunctionLibraries(ScriptHost* host) : host_(host) {}

  // FUNCTION LOAD [REPLACE]: returns the library's name, or Redis's error
  // text ("ERR Library 'x' already exists", ...).
  absl::StatusOr<std::string> Load(std::string_view code, bool replace);
  // FUNCTION DELETE: false when no such library.
  bool Delete(std::string_view library);
  // FUNCTION FLUSH: drops every library; the interpreter stays, with what
  // the libraries left in it (as in Redis).
  void Flush();

  const FunctionInfo* FindFunction(std::string_view name) const;
  const std::map<std::string, LibraryInfo, std::less<>>& libraries() const { return libraries_; }
  // REQUIRES: `name` is a function of a loaded library (any case).
  const FunctionInfo& function(std::string_view name) const { return *FindFunction(name); }
  // Every registered function, the shadowed ones too (FUNCTION STATS, as
  // Redis counts them).
  size_t function_count() const;
  // The function `name` (exactly as registered) of `lib`, for FUNCTION LIST.
  // REQUIRES: `name` is one of lib.functions.
  const FunctionInfo& listed_function(const LibraryInfo& lib, std::string_view name) const;

  // FUNCTION DUMP: Redis's payload (function records, RDB version, CRC-64).
  std::string Dump() const;
  // FUNCTION RESTORE: "APPEND" (fail on a clash), "REPLACE" (a clashing
  // library is replaced) or "FLUSH" (everything goes first).
  absl::Status Restore(std::string_view payload, std::string_view policy);

  // The engine, created with the first library; null before.
  LuaEngine* engine() const { return engine_.get(); }
  size_t memory() const { return engine_ ? engine_->memory() : 0; }

 private:
  // A library compiled into the engine, its functions not yet callable.
  struct Staged {
    LibraryInfo lib;
    std::vector<FunctionInfo> functions;
  };

  LuaEngine& EnsureEngine();
  // Checks and compiles `code` into `out`, as Redis creates a library in a
  // set of them: `others` is that set (null: the loaded libraries), whose
  // library of the same name is an error unless `replace`, as is a function
  // of another library's name. Error texts as Redis.
  absl::Status Stage(std::string_view code, const std::vector<Staged>* others, bool replace, Staged* out);
  // Releases what Stage() compiled.
  void Discard(std::vector<Staged>* staged);
  void Install(Staged staged);
  void Remove(const std::string& library);

  ScriptHost* host_;
  std::unique_ptr<LuaEngine> engine_;
  std::map<std::string, LibraryInfo, std::less<>> libraries_;  // FUNCTION LIST order: by name
  absl::flat_hash_map<std::string, FunctionInfo> functions_;
  // The last name FindFunction found, as it was asked (FCALL looks its
  // function up twice: for the gate's flags, then to run it). Cleared
  // whenever functions_ changes: flat_hash_map moves its entries.
  mutable std::string last_name_;
  mutable const FunctionInfo* last_function_ = nullptr;
};

}  // namespace ringkv::server::scripting
