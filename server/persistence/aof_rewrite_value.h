// The commands an AOF rewrite without RDB preamble (aof-use-rdb-preamble no)
// writes to recreate one key's value: SET for strings; HMSET, SADD and ZADD
// with at most 64 items each for collections, as Redis 7.0's rewrite does
// (AOF_REWRITE_ITEMS_PER_CMD).
#pragma once

#include <string>
#include <string_view>

#include "core/value.h"

namespace ringkv::server {

// Appends the RESP commands that rebuild `value` at `key` to *out.
void AppendRewriteCommands(std::string_view key, const core::Value& value, std::string* out);

}  // namespace ringkv::server
