#include "server/persistence/aof_manifest.h"

#include <algorithm>

#include "core/strings.h"
#include "core/string_value.h"

namespace ringkv::server {

absl::StatusOr<AofManifest> AofManifest::Parse(std::string_view text) {
  AofManifest m;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    line = StripWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> parts = Split(line, ' ', true);
    if (parts.size() % 2 != 0) {
      return absl::InvalidArgumentError(StrCat("Invalid AOF manifest file format (line ", line_no, ")"));
    }
    AofFile f;
    bool have_type = false, have_seq = false;
    for (size_t i = 0; i < parts.size(); i += 2) {
      if (parts[i] == "file") {
        f.name = std::string(parts[i + 1]);
      } else if (parts[i] == "seq") {
        int64_t seq;
        if (!core::StringToInt64(parts[i + 1], &seq) || seq <= 0) {
          return absl::InvalidArgumentError(StrCat("Invalid AOF manifest file format (bad seq, line ", line_no, ")"));
        }
        f.seq = seq;
        have_seq = true;
      } else if (parts[i] == "type") {
        if (parts[i + 1].size() != 1 || std::string_view("bhi").find(parts[i + 1][0]) == std::string_view::npos) {
          return absl::InvalidArgumentError(StrCat("Unknown AOF file type (line ", line_no, ")"));
        }
        f.type = parts[i + 1][0];
        have_type = true;
      }  // unknown keys are ignored, as Redis does
    }
    if (f.name.empty() || !have_seq || !have_type || f.name.find('/') != std::string::npos) {
      return absl::InvalidArgumentError(StrCat("Invalid AOF manifest file format (line ", line_no, ")"));
    }
    switch (f.type) {
      case 'b':
        if (m.base_) return absl::InvalidArgumentError("Found duplicate base file information");
        m.base_seq_ = f.seq;
        m.base_ = std::move(f);
        break;
      case 'i':
        if (f.seq <= m.incr_seq_) return absl::InvalidArgumentError("Found a non-monotonic sequence number");
        m.incr_seq_ = f.seq;
        m.incrs_.push_back(std::move(f));
        break;
      default:
        m.history_.push_back(std::move(f));
    }
  }
  if (m.empty() && m.history_.empty()) return absl::InvalidArgumentError("Found an empty AOF manifest");
  return m;
}

std::string AofManifest::Serialize() const {
  std::string out;
  auto line = [&out](const AofFile& f) { StrAppend(&out, "file ", f.name, " seq ", f.seq, " type ", std::string(1, f.type), "\n"); };
  if (base_) line(*base_);
  for (const AofFile& f : history_) line(f);
  for (const AofFile& f : incrs_) line(f);
  return out;
}

const AofFile& AofManifest::NewBase(std::string_view prefix, bool rdb) {
  if (base_) {
    base_->type = 'h';
    history_.push_back(*base_);
  }
  base_ = AofFile{StrCat(prefix, ".", ++base_seq_, ".base.", rdb ? "rdb" : "aof"), base_seq_, 'b'};
  return *base_;
}

const AofFile& AofManifest::NewIncr(std::string_view prefix) {
  incrs_.push_back(AofFile{StrCat(prefix, ".", ++incr_seq_, ".incr.aof"), incr_seq_, 'i'});
  return incrs_.back();
}

void AofManifest::RetireIncrsThrough(std::string_view last_name) {
  auto it = std::find_if(incrs_.begin(), incrs_.end(), [&](const AofFile& f) { return f.name == last_name; });
  if (it == incrs_.end()) return;
  for (auto i = incrs_.begin(); i <= it; ++i) {
    AofFile h = *i;
    h.type = 'h';
    history_.push_back(std::move(h));
  }
  incrs_.erase(incrs_.begin(), it + 1);
}

}  // namespace ringkv::server
