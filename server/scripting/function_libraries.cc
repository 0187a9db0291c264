#include "server/scripting/function_libraries.h"

#include <utility>

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

// The words of a shebang line, with "..." and '...' quoting (a quoted word
// loses its quotes), as Redis's sdssplitargs reads it. False on an
// unbalanced quote.
bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  size_t i = 0;
  while (true) {
    while (i < line.size() && absl::ascii_isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) return true;
    std::string word;
    while (i < line.size() && !absl::ascii_isspace(static_cast<unsigned char>(line[i]))) {
      const char c = line[i];
      if (c == '"' || c == '\'') {
        const size_t close = line.find(c, i + 1);
        if (close == std::string_view::npos) return false;
        word.append(line.substr(i + 1, close - i - 1));
        i = close + 1;
      } else {
        word.push_back(c);
        ++i;
      }
    }
    out->push_back(std::move(word));
  }
}

}  // namespace

absl::StatusOr<LibraryMetadata> ParseLibraryMetadata(std::string_view code) {
  if (!code.starts_with("#!")) return Err("ERR Missing library metadata");
  const size_t eol = code.find('\n');
  if (eol == std::string_view::npos) return Err("ERR Invalid library metadata");
  std::vector<std::string> parts;
  if (!SplitArgs(code.substr(0, eol), &parts) || parts.empty()) return Err("ERR Invalid library metadata");
  LibraryMetadata md;
  md.engine = parts[0].substr(2);
  bool have_name = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    if (part.size() >= 5 && EqualsIgnoreCase(part.substr(0, 5), "name=")) {
      if (have_name) return Err("ERR Invalid metadata value, name argument was given multiple times");
      md.name = std::string(part.substr(5));
      have_name = true;
    } else {
      return Err(StrCat("ERR Invalid metadata value given: ", part));
    }
  }
  if (!have_name) return Err("ERR Library name was not given");
  return md;
}

LuaEngine& FunctionLibraries::EnsureEngine() {
  if (!engine_) engine_ = std::make_unique<LuaEngine>(LuaEngine::Kind::kFunctions, host_);
  return *engine_;
}

absl::StatusOr<LibraryInfo> FunctionLibraries::Compile(std::string_view code, const LibraryMetadata& md,
                                                       std::vector<FunctionInfo>* functions) {
  LuaEngine& engine = EnsureEngine();
  std::vector<LuaEngine::Registration> registered;
  if (absl::Status s = engine.LoadLibrary(code, &registered); !s.ok()) return s;
  if (registered.empty()) return Err("ERR No functions registered");
  LibraryInfo lib;
  lib.name = md.name;
  lib.code = std::string(code);
  for (LuaEngine::Registration& r : registered) {
    lib.functions.push_back(r.name);
    functions->push_back(FunctionInfo{r.name, lib.name, r.callback_ref, r.flags, r.description, r.has_description});
  }
  return lib;
}

void FunctionLibraries::Install(LibraryInfo lib, std::vector<FunctionInfo> functions) {
  last_function_ = nullptr;
  for (FunctionInfo& f : functions) {
    std::string key = AsciiLower(f.name);
    functions_[key] = std::move(f);
  }
  std::string name = lib.name;
  libraries_[name] = std::move(lib);
}

void FunctionLibraries::Remove(const std::string& library) {
  auto it = libraries_.find(library);
  if (it == libraries_.end()) return;
  last_function_ = nullptr;
  for (const std::string& f : it->second.functions) {
    auto fit = functions_.find(AsciiLower(f));
    if (fit == functions_.end()) continue;
    if (engine_) engine_->Unref(fit->second.callback_ref);
    functions_.erase(fit);
  }
  libraries_.erase(it);
}

absl::StatusOr<std::string> FunctionLibraries::Load(std::string_view code, bool replace) {
  // The metadata first (Redis's order: engine, name, then "already
  // exists"), before anything compiles.
  absl::StatusOr<LibraryMetadata> md = ParseLibraryMetadata(code);
  if (!md.ok()) return md.status();
  if (!EqualsIgnoreCase(md->engine, "lua")) return Err(StrCat("ERR Engine '", md->engine, "' not found"));
  if (!ValidName(md->name)) {
    return Err("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one "
               "character long");
  }
  if (!replace && libraries_.contains(md->name)) return Err(StrCat("ERR Library '", md->name, "' already exists"));
  std::vector<FunctionInfo> functions;
  absl::StatusOr<LibraryInfo> lib = Compile(code, *md, &functions);
  if (!lib.ok()) return lib.status();
  for (const FunctionInfo& f : functions) {
    auto it = functions_.find(AsciiLower(f.name));
    if (it != functions_.end() && it->second.library != lib->name) {
      for (const FunctionInfo& g : functions) engine_->Unref(g.callback_ref);
      return Err(StrCat("ERR Function ", f.name, " already exists"));
    }
  }
  std::string name = lib->name;
  Remove(name);
  Install(std::move(*lib), std::move(functions));
  return name;
}

bool FunctionLibraries::Delete(std::string_view library) {
  auto it = libraries_.find(library);
  if (it == libraries_.end()) return false;
  Remove(it->first);
  return true;
}

void FunctionLibraries::Flush() {
  libraries_.clear();
  functions_.clear();
  last_function_ = nullptr;
  engine_.reset();
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

absl::Status FunctionLibraries::Restore(std::string_view payload, std::string_view policy) {
  if (payload.size() < 10) return Err("ERR DUMP payload version or checksum are wrong");
  const size_t footer = payload.size() - 10;
  const auto* p = reinterpret_cast<const unsigned char*>(payload.data());
  const int version = p[footer] | (p[footer + 1] << 8);
  uint64_t crc = 0;
  for (int i = 7; i >= 0; --i) crc = (crc << 8) | p[footer + 2 + i];
  if (version > core::rdb::kVersion ||
      (!core::SkipChecksumValidation() && core::Crc64(0, payload.substr(0, footer + 2)) != crc)) {
    return Err("ERR DUMP payload version or checksum are wrong");
  }
  // Every library is compiled before anything changes.
  std::vector<std::string> codes;
  core::MemorySource src(payload.substr(0, footer));
  core::RdbInput in(&src);
  while (src.remaining() > 0) {
    uint8_t type;
    if (!in.Byte(&type)) return Err("ERR payload is malformed");
    if (type == core::rdb::kOpFunctionPreGa) return Err("ERR Pre-GA function format not supported");
    if (type != core::rdb::kOpFunction2) return Err("ERR given type is not a function");
    std::string code;
    if (absl::Status s = in.String(&code); !s.ok()) return Err("ERR Failed loading library payload");
    codes.push_back(std::move(code));
  }
  const bool flush = EqualsIgnoreCase(policy, "flush");
  const bool replace = EqualsIgnoreCase(policy, "replace");
  // Build the new set aside: on FLUSH from nothing, else from the current one.
  FunctionLibraries staged(host_);
  if (!flush) {
    for (const auto& [name, lib] : libraries_) {
      if (absl::StatusOr<std::string> r = staged.Load(lib.code, false); !r.ok()) return r.status();
    }
  }
  for (const std::string& code : codes) {
    absl::StatusOr<LibraryMetadata> md = ParseLibraryMetadata(code);
    if (!md.ok()) return md.status();
    if (!flush && !replace && staged.libraries_.contains(md->name)) {
      return Err(StrCat("ERR Library ", md->name, " already exists"));
    }
    if (absl::StatusOr<std::string> r = staged.Load(code, true); !r.ok()) return r.status();
  }
  // Take the staged engine and tables (their references belong to it).
  libraries_ = std::move(staged.libraries_);
  functions_ = std::move(staged.functions_);
  last_function_ = nullptr;
  engine_ = std::move(staged.engine_);
  return absl::OkStatus();
}

}  // namespace ringkv::server::scripting
