// Transparent hash and equality for containers keyed by std::string, so that
// lookups take a std::string_view without building a std::string.
//
// (Debian's Abseil is built with its own absl::string_view, so Abseil's
// built-in heterogeneous lookup does not accept std::string_view.)
#pragma once

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace ringkv::core {

struct StringKeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size()));
  }
};

struct StringKeyEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

template <typename V>
using StringMap = absl::flat_hash_map<std::string, V, StringKeyHash, StringKeyEq>;

}  // namespace ringkv::core
