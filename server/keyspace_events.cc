#include "server/keyspace_events.h"

namespace ringkv::server::notify {

int64_t ParseFlags(std::string_view classes) {
  int64_t flags = 0;
  for (char c : classes) {
    switch (c) {
      case 'A': flags |= kAll; break;
      case 'g': flags |= kGeneric; break;
      case '$': flags |= kString; break;
      case 'l': flags |= kList; break;
      case 's': flags |= kSet; break;
      case 'h': flags |= kHash; break;
      case 'z': flags |= kZSet; break;
      case 'x': flags |= kExpired; break;
      case 'e': flags |= kEvicted; break;
      case 'K': flags |= kKeyspace; break;
      case 'E': flags |= kKeyevent; break;
      case 't': flags |= kStream; break;
      case 'm': flags |= kKeyMiss; break;
      case 'd': flags |= kModule; break;
      case 'n': flags |= kNew; break;
      default: return -1;
    }
  }
  return flags;
}

std::string FlagsToString(uint32_t flags) {
  std::string out;
  if ((flags & kAll) == kAll) {
    out += 'A';
  } else {
    static constexpr std::pair<uint32_t, char> kOrder[] = {
        {kGeneric, 'g'}, {kString, '$'}, {kList, 'l'},    {kSet, 's'},    {kHash, 'h'},  {kZSet, 'z'},
        {kExpired, 'x'}, {kEvicted, 'e'}, {kStream, 't'}, {kModule, 'd'}, {kNew, 'n'}};
    for (auto [bit, c] : kOrder) {
      if (flags & bit) out += c;
    }
  }
  if (flags & kKeyspace) out += 'K';
  if (flags & kKeyevent) out += 'E';
  if (flags & kKeyMiss) out += 'm';
  return out;
}

std::string FlagsToStoredString(uint32_t flags) {
  std::string out = FlagsToString(flags);
  if ((flags & kNew) && out.find('n') == std::string::npos) out += 'n';
  return out;
}

std::string StoredToShown(const std::string& stored) {
  // FlagsToString writes no 'n' after an 'A': a last 'n' there is the kept one.
  if (stored.starts_with('A') && stored.ends_with('n')) return stored.substr(0, stored.size() - 1);
  return stored;
}

}  // namespace ringkv::server::notify
