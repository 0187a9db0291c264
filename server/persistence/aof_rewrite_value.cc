#include "server/persistence/aof_rewrite_value.h"

#include <vector>

#include "core/hash_value.h"
#include "core/list_value.h"
#include "core/set_value.h"
#include "core/zset_value.h"
#include "core/resp_command.h"

namespace ringkv::server {
namespace {

constexpr size_t kItemsPerCommand = 64;

// Collects items of one collection into commands of up to 64 items each:
// `command key item...`, where an item is one or more arguments.
class BatchWriter {
 public:
  BatchWriter(std::string_view command, std::string_view key, std::string* out) : out_(out) {
    argv_.emplace_back(command);
    argv_.emplace_back(key);
  }
  ~BatchWriter() { Flush(); }
  void Item(std::string_view a) {
    argv_.emplace_back(a);
    Count();
  }
  void Item(std::string_view a, std::string_view b) {
    argv_.emplace_back(a);
    argv_.emplace_back(b);
    Count();
  }

 private:
  void Count() {
    if (++items_ == kItemsPerCommand) Flush();
  }
  void Flush() {
    if (items_ == 0) return;
    std::vector<std::string_view> views(argv_.begin(), argv_.end());
    core::AppendRespCommand(views, out_);
    argv_.resize(2);
    items_ = 0;
  }
  std::string* out_;
  std::vector<std::string> argv_;
  size_t items_ = 0;
};

}  // namespace

void AppendRewriteCommands(std::string_view key, const core::Value& value, std::string* out) {
  switch (value.type()) {
    case core::ValueType::kString: {
      char scratch[24];
      std::string_view set[] = {"SET", key, value.str().View(scratch)};
      core::AppendRespCommand(set, out);
      return;
    }
    case core::ValueType::kHash: {
      BatchWriter w("HMSET", key, out);
      value.hash().ForEach([&](std::string_view f, std::string_view v) { w.Item(f, v); });
      return;
    }
    case core::ValueType::kSet: {
      BatchWriter w("SADD", key, out);
      value.set().ForEach([&](std::string_view m) { w.Item(m); });
      return;
    }
    case core::ValueType::kZSet: {
      const core::ZSetValue& z = value.zset();
      BatchWriter w("ZADD", key, out);
      z.Walk(0, false, [&](std::string_view m, double score) {
        char buf[64];
        const int n = std::snprintf(buf, sizeof(buf), "%.17g", score);
        w.Item(std::string_view(buf, static_cast<size_t>(n)), m);
        return true;
      });
      return;
    }
    case core::ValueType::kList: {
      BatchWriter w("RPUSH", key, out);
      value.list().Walk(0, false, [&](std::string_view v) {
        w.Item(v);
        return true;
      });
      return;
    }
  }
}

}  // namespace ringkv::server
