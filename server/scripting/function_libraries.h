// FunctionLibraries: the FUNCTION libraries loaded into a server (Redis 7.0
// functions), and their functions by name.
//
// A library is its code ("#!lua name=<lib>" + Lua), loaded into the
// functions' LuaEngine, which registers its functions. Loading is
// all-or-nothing: a library that fails to compile, registers nothing, or
// names a function another library has, leaves every library as it was.
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
  // FUNCTION FLUSH: drops every library and the interpreter.
  void Flush();

  const FunctionInfo* FindFunction(std::string_view name) const;
  const std::map<std::string, LibraryInfo, std::less<>>& libraries() const { return libraries_; }
  // REQUIRES: `name` is a function of a loaded library (any case).
  const FunctionInfo& function(std::string_view name) const { return *FindFunction(name); }
  size_t function_count() const { return functions_.size(); }

  // FUNCTION DUMP: Redis's payload (function records, RDB version, CRC-64).
  std::string Dump() const;
  // FUNCTION RESTORE: "APPEND" (fail on a clash), "REPLACE" (a clashing
  // library is replaced) or "FLUSH" (everything goes first).
  absl::Status Restore(std::string_view payload, std::string_view policy);

  // The engine, created with the first library; null before.
  LuaEngine* engine() const { return engine_.get(); }
  size_t memory() const { return engine_ ? engine_->memory() : 0; }

 private:
  LuaEngine& EnsureEngine();
  // Compiles `code` (whose metadata is `md`, already checked) and collects
  // its functions (not yet installed). Error texts as Redis.
  absl::StatusOr<LibraryInfo> Compile(std::string_view code, const LibraryMetadata& md,
                                      std::vector<FunctionInfo>* functions);
  void Install(LibraryInfo lib, std::vector<FunctionInfo> functions);
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
