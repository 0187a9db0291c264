// Keyspace notifications: the event classes of notify-keyspace-events and
// their text forms, exactly as Redis 7.0 parses and prints them.
//
// A command reports what it did with Server::KeyEvent (or NotifyKeyspaceEvent
// for events that are not writes); the server publishes
// __keyspace@<db>__:<key> <event> and/or __keyevent@<db>__:<event> <key>
// when the class is enabled. Disabled classes cost one test of a bit mask.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ringkv::server::notify {

enum Class : uint32_t {
  kKeyspace = 1u << 0,  // K
  kKeyevent = 1u << 1,  // E
  kGeneric = 1u << 2,   // g
  kString = 1u << 3,    // $
  kList = 1u << 4,      // l
  kSet = 1u << 5,       // s
  kHash = 1u << 6,      // h
  kZSet = 1u << 7,      // z
  kExpired = 1u << 8,   // x
  kEvicted = 1u << 9,   // e
  kStream = 1u << 10,   // t
  kKeyMiss = 1u << 11,  // m (not part of A)
  kLoaded = 1u << 12,   // modules only
  kModule = 1u << 13,   // d
  kNew = 1u << 14,      // n (not part of A)
  kAll = kGeneric | kString | kList | kSet | kHash | kZSet | kExpired | kEvicted | kStream | kModule,
};

// The flags of a notify-keyspace-events value; -1 for a character outside
// "Ag$lshzxeKEtmdn".
int64_t ParseFlags(std::string_view classes);
// The canonical text CONFIG GET shows ("A" for all of A's classes, then
// K, E, m; n only outside A).
std::string FlagsToString(uint32_t flags);
// What the parameter keeps: FlagsToString's text and, where that leaves out
// n (with A, as Redis prints it, while it still honours n), an 'n' at the
// end, so that ParseFlags gives every class back. StoredToShown turns it
// into what CONFIG GET shows and CONFIG REWRITE writes.
std::string FlagsToStoredString(uint32_t flags);
std::string StoredToShown(const std::string& stored);

}  // namespace ringkv::server::notify
