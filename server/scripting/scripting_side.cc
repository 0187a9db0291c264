#include "server/scripting/scripting_side.h"

#include "core/strings.h"
#include "server/scripting/scripting.h"

namespace ringkv::server::scripting {

ScriptingSide::ScriptingSide(Hooks& hooks, Config& config, const Clock& clock, const CommandTable& commands)
    : hooks_(hooks), config_(config), clock_(clock), commands_(commands) {}

ScriptingSide::~ScriptingSide() = default;

Scripting& ScriptingSide::Ensure() {
  if (!scripting_) scripting_ = std::make_unique<Scripting>(*this);
  return *scripting_;
}

std::vector<std::string> ScriptingSide::FunctionLibraryCodes() const {
  std::vector<std::string> codes;
  if (scripting_) {
    for (const auto& [name, lib] : scripting_->functions().libraries()) codes.push_back(lib.code);
  }
  return codes;
}

absl::Status ScriptingSide::LoadFunctionLibraries(const std::vector<std::string>& codes, FunctionLoadMode mode) {
  if (codes.empty() && (!scripting_ || mode != FunctionLoadMode::kReplaceAll)) return absl::OkStatus();
  FunctionLibraries& functions = Ensure().functions();
  // All or nothing: the new set is built from a dump of the current one.
  const std::string before = functions.Dump();
  if (mode == FunctionLoadMode::kReplaceAll) functions.Flush();
  for (const std::string& code : codes) {
    absl::StatusOr<std::string> r = functions.Load(code, /*replace=*/mode != FunctionLoadMode::kAddOnly);
    if (!r.ok()) {
      (void)functions.Restore(before, "flush");
      return absl::DataLossError(StrCat("Failed loading library: ", ToStd(r.status().message())));
    }
  }
  return absl::OkStatus();
}

}  // namespace ringkv::server::scripting
