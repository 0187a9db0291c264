// A command as RESP writes it on the wire, in the AOF and in the replication
// stream: an array of bulk strings ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n").
// The one encoder that the AOF, the primary's stream and the replica's
// replies share.
//
// Thread-safety: none needed; a pure function.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace ringkv::core {

// Appends argv to `out` as a RESP array of bulk strings.
void AppendRespCommand(std::span<const std::string_view> argv, std::string* out);

}  // namespace ringkv::core
