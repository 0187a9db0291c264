// Adapters between std::string_view (used throughout ringkv) and Abseil's
// string utilities.
//
// Debian's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so its
// functions take absl::string_view and reject std::string_view arguments.
// These wrappers convert at the boundary and otherwise forward to Abseil:
//   std::string s = StrCat("id=", id, " name=", name_view);
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/strings.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace ringkv {

inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

namespace strings_internal {
inline absl::string_view Arg(std::string_view s) { return ToAbsl(s); }
template <typename T>
  requires(!std::is_convertible_v<const T&, std::string_view>)
const T& Arg(const T& v) {
  return v;
}
}  // namespace strings_internal

template <typename... A>
std::string StrCat(const A&... a) {
  return absl::StrCat(strings_internal::Arg(a)...);
}

template <typename... A>
void StrAppend(std::string* out, const A&... a) {
  absl::StrAppend(out, strings_internal::Arg(a)...);
}

inline std::string AsciiLower(std::string_view s) { return absl::AsciiStrToLower(ToAbsl(s)); }
inline std::string AsciiUpper(std::string_view s) { return absl::AsciiStrToUpper(ToAbsl(s)); }
inline std::string_view StripWhitespace(std::string_view s) { return ToStd(absl::StripAsciiWhitespace(ToAbsl(s))); }
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(ToAbsl(a), ToAbsl(b));
}

// Splits on `sep`; the pieces view into `s`.
inline std::vector<std::string_view> Split(std::string_view s, char sep, bool skip_empty = false) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    std::string_view piece = s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!skip_empty || !piece.empty()) out.push_back(piece);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

// Appends `s` double-quoted with C escapes, as Redis's sdscatrepr writes it
// (MONITOR's arguments, the AOF manifest's file names, configuration errors).
inline void AppendRepr(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (unsigned char ch : s) {
    switch (ch) {
      case '\\': out->append("\\\\"); break;
      case '"': out->append("\\\""); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\a': out->append("\\a"); break;
      case '\b': out->append("\\b"); break;
      default:
        if (ch >= 0x20 && ch < 0x7f) {  // isprint in the C locale
          out->push_back(static_cast<char>(ch));
        } else {
          out->append({'\\', 'x', kHex[ch >> 4], kHex[ch & 15]});
        }
    }
  }
  out->push_back('"');
}

}  // namespace ringkv
