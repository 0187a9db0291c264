#include "core/glob.h"

#include <cctype>

namespace ringkv::core {
namespace {

// Iterative matcher with one backtrack point per '*', like Redis's
// stringmatchlen but without its exponential worst case.
bool MatchClass(std::string_view pattern, size_t* pi, char c, bool nocase) {
  size_t p = *pi + 1;  // after '['
  bool negate = false;
  if (p < pattern.size() && pattern[p] == '^') {
    negate = true;
    ++p;
  }
  bool match = false;
  while (p < pattern.size() && pattern[p] != ']') {
    if (pattern[p] == '\\' && p + 1 < pattern.size()) {
      ++p;
      if (pattern[p] == c) match = true;
    } else if (p + 2 < pattern.size() && pattern[p + 1] == '-') {
      char start = pattern[p], end = pattern[p + 2];
      if (start > end) std::swap(start, end);
      char cc = c;
      if (nocase) {
        start = static_cast<char>(std::tolower(start));
        end = static_cast<char>(std::tolower(end));
        cc = static_cast<char>(std::tolower(cc));
      }
      if (cc >= start && cc <= end) match = true;
      p += 2;
    } else if (nocase ? std::tolower(pattern[p]) == std::tolower(c) : pattern[p] == c) {
      match = true;
    }
    ++p;
  }
  // An unterminated class ends at the pattern's end, as in Redis.
  *pi = p < pattern.size() ? p + 1 : p;
  return negate ? !match : match;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  // As Redis's stringmatchlen, whose loop needs a character of each: the
  // empty string matches the empty pattern only ("*" does not match it).
  if (str.empty()) return pattern.empty();
  size_t p = 0, s = 0;
  size_t star_p = std::string_view::npos, star_s = 0;
  while (s < str.size()) {
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '*') {
        while (p < pattern.size() && pattern[p] == '*') ++p;
        if (p == pattern.size()) return true;
        star_p = p;
        star_s = s;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++s;
        continue;
      }
      if (pc == '[') {
        size_t np = p;
        if (MatchClass(pattern, &np, str[s], nocase)) {
          p = np;
          ++s;
          continue;
        }
      } else {
        if (pc == '\\' && p + 1 < pattern.size()) ++p, pc = pattern[p];
        bool eq = nocase ? std::tolower(static_cast<unsigned char>(pc)) == std::tolower(static_cast<unsigned char>(str[s]))
                         : pc == str[s];
        if (eq) {
          ++p;
          ++s;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    s = ++star_s;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace ringkv::core
