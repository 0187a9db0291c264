#include "server/persistence/aof_manifest.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "core/string_value.h"
#include "core/strings.h"

namespace ringkv::server {
namespace {

// Longest line Redis reads from a manifest (MANIFEST_MAX_LINE).
constexpr size_t kMaxLine = 1024;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(absl::ascii_tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// Redis's sdssplitargs: words separated by blanks; "double quoted" words
// take \xHH, \n, \r, \t, \b, \a and \<char> escapes, 'single quoted' ones
// only \'. A closing quote must be followed by a blank or the end. False
// on unbalanced quotes.
bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  size_t i = 0;
  while (true) {
    while (i < line.size() && absl::ascii_isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i == line.size()) return true;
    std::string word;
    bool in_double = false, in_single = false;
    while (true) {
      if (in_double) {
        if (i == line.size()) return false;
        if (line[i] == '\\' && i + 3 < line.size() && line[i + 1] == 'x' && HexValue(line[i + 2]) >= 0 &&
            HexValue(line[i + 3]) >= 0) {
          word.push_back(static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3])));
          i += 4;
        } else if (line[i] == '\\' && i + 1 < line.size()) {
          const char c = line[i + 1];
          word.push_back(c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c == 'b' ? '\b' : c == 'a' ? '\a' : c);
          i += 2;
        } else if (line[i] == '"') {
          if (i + 1 < line.size() && !absl::ascii_isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          ++i;
          break;
        } else {
          word.push_back(line[i++]);
        }
      } else if (in_single) {
        if (i == line.size()) return false;
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '\'') {
          word.push_back('\'');
          i += 2;
        } else if (line[i] == '\'') {
          if (i + 1 < line.size() && !absl::ascii_isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          ++i;
          break;
        } else {
          word.push_back(line[i++]);
        }
      } else {
        if (i == line.size() || absl::ascii_isspace(static_cast<unsigned char>(line[i]))) break;
        if (line[i] == '"') {
          in_double = true;
        } else if (line[i] == '\'') {
          in_single = true;
        } else {
          word.push_back(line[i]);
        }
        ++i;
      }
    }
    out->push_back(std::move(word));
  }
}

absl::Status Refuse(std::string_view err, int line, std::string_view text, AofManifest::ParseError* where) {
  if (where != nullptr) *where = AofManifest::ParseError{line, std::string(text)};
  return absl::InvalidArgumentError(ToAbsl(err));
}

}  // namespace

std::string ManifestQuote(std::string_view name) {
  const bool needs = std::any_of(name.begin(), name.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c == '\\' || c == '"' || !std::isprint(c) || std::isspace(c);
  });
  if (!needs) return std::string(name);
  std::string out;
  AppendRepr(&out, name);
  return out;
}

absl::StatusOr<AofManifest> AofManifest::Parse(std::string_view text, ParseError* where) {
  AofManifest m;
  int line_no = 0;
  size_t at = 0;
  while (at < text.size()) {
    // A line, as fgets reads it with Redis's buffer: at most kMaxLine bytes.
    const size_t nl = text.find('\n', at);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view raw = text.substr(at, std::min(end - at, kMaxLine));
    at += raw.size();
    ++line_no;
    if (raw[0] == '#') continue;
    if (raw.back() != '\n') return Refuse("The AOF manifest file contains too long line", line_no, raw, where);
    const std::string_view line = StripWhitespace(raw);
    if (line.empty()) return Refuse("Invalid AOF manifest file format", line_no, line, where);
    std::vector<std::string> argv;
    // Fewer than 6 words is refused (forward compatibility allows more).
    if (!SplitArgs(line, &argv) || argv.size() < 6 || argv.size() % 2 != 0) {
      return Refuse("Invalid AOF manifest file format", line_no, line, where);
    }
    AofFile f;
    f.type = '\0';
    for (size_t i = 0; i < argv.size(); i += 2) {
      if (EqualsIgnoreCase(argv[i], "file")) {
        f.name = argv[i + 1];
        if (f.name.find('/') != std::string::npos) {
          return Refuse("File can't be a path, just a filename", line_no, line, where);
        }
      } else if (EqualsIgnoreCase(argv[i], "seq")) {
        int64_t seq = 0;
        f.seq = core::StringToInt64(argv[i + 1], &seq) ? seq : 0;  // Redis's atoll: not a number reads 0
      } else if (EqualsIgnoreCase(argv[i], "type")) {
        f.type = argv[i + 1].empty() ? '\0' : argv[i + 1][0];
      }  // unknown keys are ignored, as Redis does
    }
    if (f.name.empty() || f.seq == 0 || f.type == '\0') {
      return Refuse("Invalid AOF manifest file format", line_no, line, where);
    }
    switch (f.type) {
      case 'b':
        if (m.base_) return Refuse("Found duplicate base file information", line_no, line, where);
        m.base_seq_ = f.seq;
        m.base_ = std::move(f);
        break;
      case 'h':
        m.history_.push_back(std::move(f));
        break;
      case 'i':
        if (f.seq <= m.incr_seq_) return Refuse("Found a non-monotonic sequence number", line_no, line, where);
        m.incr_seq_ = f.seq;
        m.incrs_.push_back(std::move(f));
        break;
      default:
        return Refuse("Unknown AOF file type", line_no, line, where);
    }
  }
  if (line_no == 0) return Refuse("Found an empty AOF manifest", 0, "", where);
  return m;
}

std::string AofManifest::Serialize() const {
  std::string out;
  auto line = [&out](const AofFile& f) {
    StrAppend(&out, "file ", ManifestQuote(f.name), " seq ", f.seq, " type ", std::string(1, f.type), "\n");
  };
  if (base_) line(*base_);
  for (const AofFile& f : history_) line(f);
  for (const AofFile& f : incrs_) line(f);
  return out;
}

void AofManifest::SetUpgradedBase(std::string name) {
  base_ = AofFile{std::move(name), 1, 'b'};
  base_seq_ = 1;
}

const AofFile& AofManifest::NewBase(std::string_view prefix, bool rdb) {
  if (base_) {
    base_->type = 'h';
    history_.insert(history_.begin(), *base_);
  }
  base_ = AofFile{StrCat(prefix, ".", ++base_seq_, ".base.", rdb ? "rdb" : "aof"), base_seq_, 'b'};
  return *base_;
}

const AofFile& AofManifest::NewIncr(std::string_view prefix) {
  incrs_.push_back(AofFile{StrCat(prefix, ".", ++incr_seq_, ".incr.aof"), incr_seq_, 'i'});
  return incrs_.back();
}

void AofManifest::RetireIncrs(bool keep_last) {
  const size_t n = incrs_.size() - (keep_last && !incrs_.empty() ? 1 : 0);
  std::vector<AofFile> retired(incrs_.begin(), incrs_.begin() + static_cast<std::ptrdiff_t>(n));
  for (AofFile& f : retired) f.type = 'h';
  history_.insert(history_.begin(), retired.begin(), retired.end());
  incrs_.erase(incrs_.begin(), incrs_.begin() + static_cast<std::ptrdiff_t>(n));
}

}  // namespace ringkv::server
