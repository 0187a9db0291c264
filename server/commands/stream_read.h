// The stream family's registration parts: XREAD and XREADGROUP
// (stream_read.cc), registered with the rest by RegisterStreamCommands.
#pragma once

namespace ringkv::server {

class CommandTable;
void RegisterStreamReadCommands(CommandTable& table);
// The consumer-group commands (stream_group_cmds.cc) and XINFO (stream_info_cmds.cc).
void RegisterStreamGroupCommands(CommandTable& table);
void RegisterStreamInfoCommands(CommandTable& table);

}  // namespace ringkv::server
