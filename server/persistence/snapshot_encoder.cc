#include "server/persistence/snapshot_encoder.h"

#include <string>
#include <string_view>

#include "core/resp_command.h"
#include "core/strings.h"
#include "server/persistence/aof_rewrite_value.h"
#include "server/version.h"

namespace ringkv::server {
namespace {

class RdbEncoder final : public SnapshotEncoder {
 public:
  RdbEncoder(core::ByteSink* out, const RdbSaveOptions& options)
      : writer_(out, options.compress, options.checksum), records_(&writer_) {}
  void Begin(const RdbSaveOptions& options) override {
    writer_.Header();
    writer_.Aux("redis-ver", kRedisVersion);
    writer_.AuxInt("redis-bits", 64);
    writer_.AuxInt("ctime", options.now_ms / 1000);
    writer_.AuxInt("used-mem", options.used_memory);
    if (!options.repl_id.empty()) {
      writer_.AuxInt("repl-stream-db", options.repl_stream_db);
      writer_.Aux("repl-id", options.repl_id);
      writer_.AuxInt("repl-offset", options.repl_offset);
    }
    writer_.AuxInt("aof-base", options.aof_base ? 1 : 0);
    for (const std::string& code : options.function_libraries) writer_.FunctionLibrary(code);
  }
  void End() override { (void)writer_.Finish(); }  // EOF and checksum; an error shows in status()
  absl::Status status() const override { return writer_.status(); }
  size_t buffered() const override { return writer_.buffered(); }
  void SelectDb(int db, bool first, uint64_t keys, uint64_t expires) override {
    records_.SelectDb(db, first, keys, expires);
  }
  void Key(std::string_view key, const core::Value& value, int64_t expire_ms, const core::KeyMeta& meta) override {
    records_.Key(key, value, expire_ms, meta);
  }
  uint64_t bytes() const override { return records_.bytes(); }

 private:
  core::RdbWriter writer_;
  core::RdbRecordSink records_;
};

class AofCommandEncoder final : public SnapshotEncoder {
 public:
  explicit AofCommandEncoder(core::ByteSink* out) : out_(out) {}
  void Begin(const RdbSaveOptions& options) override {
    // Functions first, as Redis's rewrite writes them: keys may need them
    // no more than a replica does, but a replay must end with every library.
    for (const std::string& code : options.function_libraries) {
      std::string_view load[] = {"FUNCTION", "LOAD", code};
      core::AppendRespCommand(load, &buf_);
    }
  }
  void End() override { Flush(); }
  absl::Status status() const override { return status_; }
  size_t buffered() const override { return buf_.size(); }
  void SelectDb(int db, bool, uint64_t, uint64_t) override {
    const std::string index = StrCat(db);
    std::string_view select[] = {"SELECT", index};
    core::AppendRespCommand(select, &buf_);
  }
  void Key(std::string_view key, const core::Value& value, int64_t expire_ms, const core::KeyMeta&) override {
    AppendRewriteCommands(key, value, &buf_);
    if (expire_ms >= 0) {
      const std::string ms = StrCat(expire_ms);
      std::string_view expire[] = {"PEXPIREAT", key, ms};
      core::AppendRespCommand(expire, &buf_);
    }
    if (buf_.size() >= core::RdbWriter::kFlushAt) Flush();
  }
  uint64_t bytes() const override { return flushed_ + buf_.size(); }

 private:
  void Flush() {
    if (status_.ok() && !buf_.empty()) status_ = out_->Write(buf_);
    flushed_ += buf_.size();
    buf_.clear();
  }
  core::ByteSink* out_;
  std::string buf_;
  uint64_t flushed_ = 0;
  absl::Status status_;
};

}  // namespace

std::unique_ptr<SnapshotEncoder> MakeRdbEncoder(core::ByteSink* out, const RdbSaveOptions& options) {
  return std::make_unique<RdbEncoder>(out, options);
}

std::unique_ptr<SnapshotEncoder> MakeAofCommandEncoder(core::ByteSink* out) {
  return std::make_unique<AofCommandEncoder>(out);
}

absl::Status WriteKeyspace(core::Keyspace& ks, SnapshotEncoder& encoder, const RdbSaveOptions& options) {
  encoder.Begin(options);
  const core::AccessPolicy& access = ks.access_policy();
  uint64_t keys_done = 0;
  for (int i = 0; i < (options.exclude_data ? 0 : ks.count()) && encoder.status().ok(); ++i) {
    core::Database& db = ks.db(i);
    if (db.size() == 0) continue;
    encoder.SelectDb(i, /*first=*/true, db.size(), db.expires());
    db.ForEachIncludingExpired([&](std::string_view key, const core::Entry& e) {
      encoder.Key(key, e.value, db.GetExpire(&e), core::SnapshotKeyMeta(access, e, options.now_ms));
      AfterKeySaved(++keys_done, options.key_save_delay_us);
    });
  }
  encoder.End();
  return encoder.status();
}

}  // namespace ringkv::server
