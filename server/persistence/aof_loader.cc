#include "server/persistence/aof_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/rdb_reader.h"
#include "core/strings.h"
#include "server/persistence/rdb_snapshot.h"

namespace ringkv::server {
namespace {

enum class ReadResult { kOk, kEof, kBad };

// One "*N\r\n" or "$N\r\n" line; kEof when the file ends inside it.
ReadResult ReadLine(core::FdSource& src, std::string* line) {
  line->clear();
  char c;
  while (true) {
    if (!src.Read(&c, 1)) return ReadResult::kEof;
    if (c == '\n') break;
    if (line->size() > 64) return ReadResult::kBad;  // no count line is this long
    line->push_back(c);
  }
  if (line->empty() || line->back() != '\r') return ReadResult::kBad;
  line->pop_back();
  return ReadResult::kOk;
}

bool ParseCount(std::string_view s, int64_t* out) { return core::StringToInt64(s, out) && *out >= 0; }

}  // namespace

absl::StatusOr<AofReplayResult> ReplayAofFile(const std::string& path, bool may_truncate, core::Keyspace& ks,
                                              int64_t now_ms, const AofApply& apply) {
  const std::string name = path.substr(path.rfind('/') + 1);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(StrCat("Can't open the append-only file ", name, ": ", std::strerror(errno)));
  struct stat st;
  ::fstat(fd, &st);
  AofReplayResult result;
  result.size = static_cast<uint64_t>(st.st_size);
  core::FdSource src(fd);
  apply.begin_file();
  auto fail = [&](absl::Status s) {
    ::close(fd);
    return s;
  };
  auto bad_format = [&]() {
    return fail(absl::DataLossError(
        StrCat("Bad file format reading the append only file ", name, " at offset ", src.offset(),
               ": make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>")));
  };

  char magic[5];
  if (st.st_size >= 5 && ::pread(fd, magic, 5, 0) == 5 && std::string_view(magic, 5) == "REDIS") {
    absl::StatusOr<RdbLoadStats> rdb = LoadRdbInto(&src, ks, now_ms);
    if (!rdb.ok()) {
      return fail(absl::DataLossError(StrCat("Error reading the RDB base file ", name, ": ", rdb.status().message())));
    }
    result.rdb_keys = rdb->loaded;
    // The base's function libraries, as the commands that load them.
    for (const std::string& code : rdb->function_libraries) {
      const std::string_view load[] = {"FUNCTION", "LOAD", "REPLACE", code};
      if (absl::Status s = apply.command(load, false); !s.ok()) return fail(s);
    }
  }

  uint64_t valid_up_to = src.offset();     // end of the last complete command
  uint64_t valid_before_multi = 0;         // start of an open MULTI block
  bool in_multi = false;
  std::vector<std::vector<std::string>> queued;  // commands of the open MULTI
  std::string line;
  std::vector<std::string> args;
  std::vector<std::string_view> views;
  bool eof_mid_command = false;
  while (true) {
    ReadResult r = ReadLine(src, &line);
    if (r == ReadResult::kEof) {
      eof_mid_command = !line.empty();
      break;
    }
    if (r == ReadResult::kBad) return bad_format();
    if (line[0] == '#') {  // annotation line (Redis 7.0)
      valid_up_to = src.offset();
      continue;
    }
    int64_t argc;
    if (line[0] != '*' || !ParseCount(std::string_view(line).substr(1), &argc) || argc < 1) return bad_format();
    args.assign(static_cast<size_t>(argc), std::string());
    bool complete = true;
    for (int64_t i = 0; i < argc && complete; ++i) {
      r = ReadLine(src, &line);
      if (r == ReadResult::kEof) {
        complete = false;
        break;
      }
      int64_t len;
      if (r == ReadResult::kBad || line[0] != '$' || !ParseCount(std::string_view(line).substr(1), &len)) {
        return bad_format();
      }
      std::string& a = args[static_cast<size_t>(i)];
      a.resize(static_cast<size_t>(len) + 2);
      if (!src.Read(a.data(), a.size())) {
        complete = false;
        break;
      }
      if (a[a.size() - 2] != '\r' || a[a.size() - 1] != '\n') return bad_format();
      a.resize(static_cast<size_t>(len));
    }
    if (!complete) {
      eof_mid_command = true;
      break;
    }
    // Redis's loader: a MULTI marks where a cut-off block would be cut
    // back to (a nested one too, which is then queued); an EXEC inside a
    // block runs it; anything else inside one is queued.
    const bool is_multi = EqualsIgnoreCase(args[0], "multi");
    if (is_multi) valid_before_multi = valid_up_to;
    if (is_multi && !in_multi) {
      in_multi = true;
    } else if (in_multi && EqualsIgnoreCase(args[0], "exec")) {
      for (auto& q : queued) {
        views.assign(q.begin(), q.end());
        if (absl::Status s = apply.command(views, /*in_transaction=*/true); !s.ok()) {
          return fail(absl::DataLossError(StrCat(s.message(), " reading the append only file ", name)));
        }
        ++result.commands;
      }
      queued.clear();
      in_multi = false;
    } else if (in_multi) {
      queued.push_back(std::move(args));
      args = {};
    } else {
      views.assign(args.begin(), args.end());
      if (absl::Status s = apply.command(views, /*in_transaction=*/false); !s.ok()) {
        return fail(absl::DataLossError(StrCat(s.message(), " reading the append only file ", name)));
      }
      ++result.commands;
    }
    valid_up_to = src.offset();
  }
  ::close(fd);
  if (!eof_mid_command && !in_multi) return result;

  // The file ends inside a command or a transaction.
  const uint64_t cut = in_multi ? valid_before_multi : valid_up_to;
  if (!may_truncate) {
    return absl::DataLossError(
        StrCat("Unexpected end of file reading the append only file ", name,
               ". You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "
               "2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the "
               "server."));
  }
  if (::truncate(path.c_str(), static_cast<off_t>(cut)) != 0) {
    return absl::InternalError(StrCat("Error truncating the AOF file ", name, ": ", std::strerror(errno)));
  }
  result.truncated = true;
  result.truncated_at = cut;
  result.size = cut;
  return result;
}

}  // namespace ringkv::server
