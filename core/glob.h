// Glob-style pattern matching with Redis's rules (KEYS, SCAN MATCH, CONFIG
// GET, PSUBSCRIBE): '*', '?', '[abc]', '[^a-z]', '\x' escapes.
#pragma once

#include <string_view>

namespace ringkv::core {

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase = false);

}  // namespace ringkv::core
