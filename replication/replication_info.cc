#include "core/strings.h"
#include "replication/replication_info.h"

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"

namespace ringkv::repl {

ReplicationIds ReplicationIds::Fresh() {
  static const char kHex[] = "0123456789abcdef";
  absl::BitGen gen;
  ReplicationIds ids;
  ids.replid.resize(40);
  for (char& c : ids.replid) c = kHex[absl::Uniform(gen, 0, 16)];
  return ids;
}

void AppendStandaloneInfo(const ReplicationIds& ids, int64_t backlog_size, std::string* out) {
  StrAppend(out, "role:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n",
                  "master_replid:", ids.replid, "\r\nmaster_replid2:", ids.replid2, "\r\n",
                  "master_repl_offset:", ids.offset, "\r\nsecond_repl_offset:", ids.second_offset, "\r\n",
                  "repl_backlog_active:0\r\nrepl_backlog_size:", backlog_size, "\r\n",
                  "repl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n");
}

}  // namespace ringkv::repl
