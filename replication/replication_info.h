// INFO replication for a server with no replication component.
//
// The replication component (backlog, replica list, ack tracking) is created
// lazily, the first time a replica attaches or this server becomes one; until
// then the server is a standalone primary and pays nothing for it. This is
// what INFO replication and ROLE report in that state, with Redis's fields.
#pragma once

#include <cstdint>
#include <string>

namespace ringkv::repl {

// Replication ids as Redis keeps them: 40 hex chars; replid2 all zeros until
// a promotion gives it a value.
struct ReplicationIds {
  std::string replid;
  std::string replid2 = std::string(40, '0');
  int64_t offset = 0;
  int64_t second_offset = -1;
  static ReplicationIds Fresh();
};

// Appends the "# Replication" section body of a standalone primary.
void AppendStandaloneInfo(const ReplicationIds& ids, int64_t backlog_size, std::string* out);

}  // namespace ringkv::repl
