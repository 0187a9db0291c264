// hiredis helpers for the end-to-end tests: an owning context, a connect
// that fails the test (rather than hanging it) when a reply never comes, and
// std::string arguments passed as hiredis's argv/argvlen arrays.
#pragma once

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

namespace ringkv::testing {

struct RedisFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
using Redis = std::unique_ptr<redisContext, RedisFree>;

inline Redis Connect(int port) {
  Redis c(redisConnect("127.0.0.1", port));
  EXPECT_TRUE(c && !c->err);
  if (c) redisSetTimeout(c.get(), timeval{20, 0});
  return c;
}

// Calls fn(argc, argv, argvlen) with `args` in hiredis's form.
template <typename Fn>
auto WithArgv(const std::vector<std::string>& args, Fn fn) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  return fn(static_cast<int>(args.size()), ptrs.data(), lens.data());
}

// Runs one command; the reply (nullptr on an I/O error), to be freed with
// freeReplyObject.
inline redisReply* CommandArgv(redisContext* c, const std::vector<std::string>& args) {
  return WithArgv(args, [c](int argc, const char** argv, const size_t* lens) {
    return static_cast<redisReply*>(redisCommandArgv(c, argc, argv, lens));
  });
}

}  // namespace ringkv::testing
