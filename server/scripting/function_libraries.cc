#include "server/scripting/function_libraries.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "core/crc64.h"
#include "core/rdb_format.h"
#include "core/rdb_input.h"
#include "core/rdb_reader.h"
#include "core/rdb_string.h"
#include "core/strings.h"
#include "io/resp_parser.h"
#include "server/errors.h"

namespace ringkv::server::scripting {
namespace {

// Letters, digits and '_', at least one (Redis's functionsVerifyName).
bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

absl::Status Err(std::string_view text) { return absl::InvalidArgumentError(ToAbsl(text)); }

}  // namespace

absl::StatusOr<LibraryMetadata> ParseLibraryMetadata(std::string_view code) {
  if (!code.starts_with("#!")) return Err("ERR Missing library metadata");
  // The first line as Redis reads it: a C string up to its '\n', split as
  // sdssplitargs splits it; a word is printed up to a NUL (%s).
  const size_t eol = code.find('\n');
  if (eol == std::string_view::npos || code.substr(0, eol).find('\0') != std::string_view::npos) {
    return Err("ERR Invalid library metadata");
  }
  std::string storage;
  absl::InlinedVector<std::string_view, 8> parts;
  if (!io::SplitInlineArgs(code.substr(0, eol), &storage, &parts) || parts.empty()) {
    return Err("ERR Invalid library metadata");
  }
  LibraryMetadata md;
  md.engine = std::string(parts[0].substr(std::min<size_t>(2, parts[0].size())));
  bool have_name = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    if (part.size() >= 5 && EqualsIgnoreCase(part.substr(0, 5), "name=")) {
      if (have_name) return Err("ERR Invalid metadata value, name argument was given multiple times");
      md.name = std::string(part.substr(5));
      have_name = true;
    } else {
      return Err(StrCat("ERR Invalid metadata value given: ", errors::UpToNul(part)));
    }
  }
  if (!have_name) return Err("ERR Library name was not given");
  return md;
}

LuaEngine& FunctionLibraries::EnsureEngine() {
  if (!engine_) engine_ = std::make_unique<LuaEngine>(LuaEngine::Kind::kFunctions, host_);
  return *engine_;
}

void FunctionLibraries::Discard(std::vector<Staged>* staged) {
  for (Staged& st : *staged) {
    for (const FunctionInfo& f : st.functions) engine_->Unref(f.callback_ref);
  }
  staged->clear();
}

absl::Status FunctionLibraries::Stage(std::string_view code, const std::vector<Staged>* others, bool replace,
                                      Staged* out) {
  // Redis's order: the metadata (engine, name), a library of that name,
  // the code, then a function another library has.
  absl::StatusOr<LibraryMetadata> md = ParseLibraryMetadata(code);
  if (!md.ok()) return md.status();
  if (!EqualsIgnoreCase(md->engine, "lua")) return Err(StrCat("ERR Engine '", md->engine, "' not found"));
  if (!ValidName(md->name)) {
    return Err("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one "
               "character long");
  }
  const bool exists =
      others != nullptr ? std::ranges::any_of(*others, [&](const Staged& st) { return st.lib.name == md->name; })
                        : libraries_.contains(md->name);
  if (exists && !replace) return Err(StrCat("ERR Library '", md->name, "' already exists"));
  LuaEngine& engine = EnsureEngine();
  std::vector<LuaEngine::Registration> registered;
  if (absl::Status s = engine.LoadLibrary(code, &registered); !s.ok()) return s;
  out->lib = LibraryInfo{md->name, std::string(code), {}, {}};
  out->functions.clear();
  for (LuaEngine::Registration& r : registered) {
    out->lib.functions.push_back(r.name);
    out->functions.push_back(
        FunctionInfo{r.name, md->name, r.callback_ref, r.flags, std::move(r.description), r.has_description});
  }
  auto unref_all = [&] {
    for (const FunctionInfo& f : out->functions) engine.Unref(f.callback_ref);
    out->functions.clear();
  };
  if (out->functions.empty()) return Err("ERR No functions registered");
  for (const FunctionInfo& f : out->functions) {
    const std::string key = AsciiLower(f.name);
    bool taken;
    if (others != nullptr) {
      taken = std::ranges::any_of(*others, [&](const Staged& st) {
        return std::ranges::any_of(st.functions, [&](const FunctionInfo& g) { return AsciiLower(g.name) == key; });
      });
    } else {
      auto it = functions_.find(key);
      taken = it != functions_.end() && it->second.library != md->name;
    }
    if (taken) {
      std::string err = StrCat("ERR Function ", f.name, " already exists");
      unref_all();
      return Err(err);
    }
  }
  return absl::OkStatus();
}

void FunctionLibraries::Install(Staged staged) {
  last_function_ = nullptr;
  for (FunctionInfo& f : staged.functions) {
    std::string key = AsciiLower(f.name);
    // Names that differ in case only, in one library: the first one
    // registered answers to both (Redis keeps one of them too).
    if (auto it = functions_.find(key); it != functions_.end()) {
      engine_->Unref(f.callback_ref);
      f.callback_ref = 0;
      staged.lib.shadowed.push_back(std::move(f));
      continue;
    }
    functions_.emplace(std::move(key), std::move(f));
  }
  std::string name = staged.lib.name;
  libraries_[name] = std::move(staged.lib);
}

void FunctionLibraries::Remove(const std::string& library) {
  auto it = libraries_.find(library);
  if (it == libraries_.end()) return;
  last_function_ = nullptr;
  for (const std::string& f : it->second.functions) {
    auto fit = functions_.find(AsciiLower(f));
    if (fit == functions_.end() || fit->second.library != library) continue;
    if (engine_) engine_->Unref(fit->second.callback_ref);
    functions_.erase(fit);
  }
  libraries_.erase(it);
}

absl::StatusOr<std::string> FunctionLibraries::Load(std::string_view code, bool replace) {
  Staged staged;
  if (absl::Status s = Stage(code, /*others=*/nullptr, replace, &staged); !s.ok()) return s;
  std::string name = staged.lib.name;
  Remove(name);
  Install(std::move(staged));
  return name;
}

bool FunctionLibraries::Delete(std::string_view library) {
  auto it = libraries_.find(library);
  if (it == libraries_.end()) return false;
  Remove(it->first);
  return true;
}

void FunctionLibraries::Flush() {
  // The engine stays, as Redis's: what a library left in the Lua state
  // (a cjson setting) survives FUNCTION FLUSH.
  if (engine_) {
    for (const auto& [key, f] : functions_) engine_->Unref(f.callback_ref);
  }
  libraries_.clear();
  functions_.clear();
  last_function_ = nullptr;
}

size_t FunctionLibraries::function_count() const {
  size_t n = functions_.size();
  for (const auto& [name, lib] : libraries_) n += lib.shadowed.size();
  return n;
}

const FunctionInfo& FunctionLibraries::listed_function(const LibraryInfo& lib, std::string_view name) const {
  for (const FunctionInfo& f : lib.shadowed) {
    if (f.name == name) return f;
  }
  return *FindFunction(name);
}

const FunctionInfo* FunctionLibraries::FindFunction(std::string_view name) const {
  if (last_function_ != nullptr && name == last_name_) return last_function_;
  // Names are kept lower-case (Redis matches them in any case); FCALL's name
  // is lowered on the stack, as FCALL runs per request.
  absl::InlinedVector<char, 64> lower(name.begin(), name.end());
  for (char& ch : lower) ch = absl::ascii_tolower(static_cast<unsigned char>(ch));
  auto it = functions_.find(absl::string_view(lower.data(), lower.size()));
  if (it == functions_.end()) return nullptr;
  last_name_.assign(name);
  last_function_ = &it->second;
  return last_function_;
}

std::string FunctionLibraries::Dump() const {
  std::string out;
  for (const auto& [name, lib] : libraries_) {
    out.push_back(static_cast<char>(core::rdb::kOpFunction2));
    core::RdbEncodeString(lib.code, /*compress=*/true, &out);
  }
  out.push_back(static_cast<char>(core::rdb::kVersion & 0xFF));
  out.push_back(static_cast<char>((core::rdb::kVersion >> 8) & 0xFF));
  const uint64_t crc = core::Crc64(0, out);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  return out;
}

namespace {

// One record of a FUNCTION DUMP payload: the library's code. A record of a
// 7.0 release candidate (name, engine, description, code) becomes the
// code with its "#!<engine> name=<name>" line, as Redis 7.0 translates it.
absl::Status ReadLibraryRecord(core::RdbInput& in, std::string* code) {
  uint8_t type;
  if (!in.Byte(&type)) return Err("ERR can not read data type");
  if (type == core::rdb::kOpFunction2) {
    if (!in.String(code).ok()) return Err("ERR Failed loading library payload");
    return absl::OkStatus();
  }
  if (type != core::rdb::kOpFunctionPreGa) return Err("ERR given type is not a function");
  std::string name, engine, description, blob;
  if (!in.String(&name).ok()) return Err("ERR Failed loading library name");
  if (!in.String(&engine).ok()) return Err("ERR Failed loading engine name");
  uint64_t has_description;
  bool encoded;  // a string-encoding byte reads as its low bits, as Redis's rdbLoadLenByRef
  if (!in.Length(&has_description, &encoded).ok()) return Err("ERR Failed loading library description indicator");
  if (has_description != 0 && !in.String(&description).ok()) return Err("ERR Failed loading library description");
  if (!in.String(&blob).ok()) return Err("ERR Failed loading library blob");
  *code = StrCat("#!", engine, " name=", name, "\n", blob);
  return absl::OkStatus();
}

}  // namespace

absl::Status FunctionLibraries::Restore(std::string_view payload, std::string_view policy) {
  constexpr size_t kFooter = 10;  // RDB version, CRC-64
  if (payload.size() < kFooter) return Err("ERR DUMP payload version or checksum are wrong");
  const size_t footer = payload.size() - kFooter;
  const auto* p = reinterpret_cast<const unsigned char*>(payload.data());
  const int version = p[footer] | (p[footer + 1] << 8);
  uint64_t crc = 0;
  for (int i = 7; i >= 0; --i) crc = (crc << 8) | p[footer + 2 + i];
  if (version > core::rdb::kVersion ||
      (!core::SkipChecksumValidation() && core::Crc64(0, payload.substr(0, footer + 2)) != crc)) {
    return Err("ERR DUMP payload version or checksum are wrong");
  }
  // As Redis: each library is compiled as it is read, into a set of its own
  // (the first bad record's error wins; a name twice in the payload is an
  // error); the set then joins the loaded libraries. A record may read into
  // the footer, as Redis's reader does: only its start must be before it.
  std::vector<Staged> staged;
  core::MemorySource src(payload);
  core::RdbInput in(&src);
  while (src.remaining() > kFooter) {
    std::string code;
    absl::Status s = ReadLibraryRecord(in, &code);
    Staged st;
    if (s.ok()) s = Stage(code, &staged, /*replace=*/false, &st);
    if (!s.ok()) {
      Discard(&staged);
      return s;
    }
    staged.push_back(std::move(st));
  }
  const bool flush = EqualsIgnoreCase(policy, "flush");
  const bool replace = EqualsIgnoreCase(policy, "replace");
  if (!flush) {
    // The join: a library of a loaded name (unless REPLACE), then a
    // function of a library that stays.
    absl::flat_hash_set<std::string> replaced;
    for (const Staged& st : staged) {
      if (!libraries_.contains(st.lib.name)) continue;
      if (!replace) {
        std::string err = StrCat("ERR Library ", st.lib.name, " already exists");
        Discard(&staged);
        return Err(err);
      }
      replaced.insert(st.lib.name);
    }
    for (const Staged& st : staged) {
      for (const FunctionInfo& f : st.functions) {
        auto it = functions_.find(AsciiLower(f.name));
        if (it != functions_.end() && !replaced.contains(it->second.library)) {
          std::string err = StrCat("ERR Function ", f.name, " already exists");
          Discard(&staged);
          return Err(err);
        }
      }
    }
    for (const std::string& name : replaced) Remove(name);
  } else {
    Flush();
  }
  for (Staged& st : staged) Install(std::move(st));
  return absl::OkStatus();
}

}  // namespace ringkv::server::scripting
