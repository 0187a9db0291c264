// ReplayAofFile: commands, MULTI/EXEC, an RDB preamble, and what happens to a
// file that ends mid-command or is malformed.
#include "server/persistence/aof_loader.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "server/persistence/rdb_snapshot.h"

namespace ringkv::server {
namespace {

class AofLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/ringkv-aof-loader-XXXXXX";
    dir_ = mkdtemp(templ);
    path_ = dir_ + "/f.aof";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& data) { std::ofstream(path_, std::ios::binary) << data; }
  uint64_t Size() const { return std::filesystem::file_size(path_); }

  absl::StatusOr<AofReplayResult> Replay(bool may_truncate) {
    applied_.clear();
    AofApply apply;
    apply.begin_file = [this] { applied_.push_back("(file)"); };
    apply.command = [this](std::span<const std::string_view> argv, bool in_transaction) {
      std::string line = in_transaction ? "[multi] " : "";
      for (std::string_view a : argv) line += std::string(a) + " ";
      applied_.push_back(line);
      return absl::OkStatus();
    };
    auto r = ReplayAofFile(path_, may_truncate, ks_, 1000, apply);
    // Every replay starts a file, before anything of it is applied.
    EXPECT_TRUE(!applied_.empty() && applied_.front() == "(file)");
    if (!applied_.empty()) applied_.erase(applied_.begin());
    return r;
  }

  std::string dir_, path_;
  core::Keyspace ks_{16};
  std::vector<std::string> applied_;
};

const std::string kSet = "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n";
const std::string kIncr = "*2\r\n$4\r\nINCR\r\n$1\r\nb\r\n";

TEST_F(AofLoaderTest, AppliesCommandsInOrder) {
  Write(kSet + "#TS:12345\r\n" + kIncr);
  auto r = Replay(false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->commands, 2u);
  EXPECT_EQ(applied_, (std::vector<std::string>{"SET a 1 ", "INCR b "}));
}

TEST_F(AofLoaderTest, AppliesTransactionsOnlyWhenComplete) {
  Write(kSet + "*1\r\n$5\r\nMULTI\r\n" + kIncr + "*1\r\n$4\r\nEXEC\r\n");
  ASSERT_TRUE(Replay(false).ok());
  EXPECT_EQ(applied_, (std::vector<std::string>{"SET a 1 ", "[multi] INCR b "}));

  // Cut inside the transaction: nothing of it is applied, and the file is
  // truncated back to before MULTI.
  const std::string open_multi = kSet + "*1\r\n$5\r\nMULTI\r\n" + kIncr;
  Write(open_multi);
  auto r = Replay(true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(applied_, (std::vector<std::string>{"SET a 1 "}));
  EXPECT_EQ(Size(), kSet.size());
}

TEST_F(AofLoaderTest, TruncatedLastCommandIsCutWhenAllowed) {
  const std::string whole = kSet + kIncr;
  for (size_t cut = kSet.size() + 1; cut < whole.size(); ++cut) {
    Write(whole.substr(0, cut));
    auto refused = Replay(false);
    ASSERT_FALSE(refused.ok()) << "cut " << cut;
    EXPECT_NE(std::string(refused.status().message()).find("Unexpected end of file"), std::string::npos);
    auto r = Replay(true);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->truncated);
    EXPECT_EQ(applied_.size(), 1u);
    EXPECT_EQ(Size(), kSet.size()) << "cut " << cut;
  }
}

TEST_F(AofLoaderTest, MalformedFileIsRefusedEvenWhenTruncationIsAllowed) {
  for (const std::string& bad : {kSet + "garbage\r\n", kSet + "*2\r\nx3\r\nfoo\r\n", kSet + "*0\r\n",
                                 std::string("*1\r\n$3\r\nabcXY")}) {
    Write(bad);
    auto r = Replay(true);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(std::string(r.status().message()).find("Bad file format"), std::string::npos) << r.status();
  }
}

TEST_F(AofLoaderTest, LoadsAnRdbPreambleThenCommands) {
  core::Keyspace source(16);
  bool created;
  core::Entry* e = source.db(0).FindOrInsert("pre", 1000, &created);
  e->value = core::StringValue("amble");
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  RdbSaveOptions o;
  o.aof_base = true;
  ASSERT_TRUE(WriteRdb(source, fd, o).ok());
  ASSERT_EQ(::write(fd, kIncr.data(), kIncr.size()), static_cast<ssize_t>(kIncr.size()));
  ::close(fd);
  auto r = Replay(false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rdb_keys, 1u);
  EXPECT_EQ(applied_, (std::vector<std::string>{"INCR b "}));
  ASSERT_NE(ks_.db(0).Find("pre", 1000), nullptr);
  EXPECT_EQ(ks_.db(0).Find("pre", 1000)->value.str().ToString(), "amble");
}

TEST_F(AofLoaderTest, EmptyFileLoadsNothing) {
  Write("");
  auto r = Replay(false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->commands, 0u);
}

// Redis's loader: an EXEC with no MULTI is run as a command (its error
// reply does not stop the load); a MULTI inside a block is queued like any
// command, and a cut-off block is cut back to the last MULTI read.
TEST_F(AofLoaderTest, ExecWithoutMultiAndNestedMultiAreAppliedAsRedisDoes) {
  const std::string multi = "*1\r\n$5\r\nMULTI\r\n";
  const std::string exec = "*1\r\n$4\r\nEXEC\r\n";
  Write(exec + kSet + multi + kIncr + multi + kSet + exec + kIncr);
  auto r = Replay(false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(applied_, (std::vector<std::string>{"EXEC ", "SET a 1 ", "[multi] INCR b ", "[multi] MULTI ",
                                                "[multi] SET a 1 ", "INCR b "}));

  const std::string kept = kSet + multi + kIncr;
  Write(kept + multi + kSet);
  r = Replay(true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(Size(), kept.size());
  EXPECT_EQ(applied_, (std::vector<std::string>{"SET a 1 "}));
}

}  // namespace
}  // namespace ringkv::server
