#include "replication/shared_snapshot.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ringkv::repl {
namespace {

// A temporary file of `n` patterned bytes, opened for reading.
class TempFile {
 public:
  explicit TempFile(size_t n) : bytes_(n, '\0') {
    for (size_t i = 0; i < n; ++i) bytes_[i] = static_cast<char>((i * 131 + i / 7) & 0xFF);
    char path[] = "/tmp/shared_snapshot_test.XXXXXX";
    const int fd = ::mkstemp(path);
    path_ = path;
    EXPECT_EQ(::write(fd, bytes_.data(), bytes_.size()), static_cast<ssize_t>(bytes_.size()));
    ::close(fd);
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  int Open() const { return ::open(path_.c_str(), O_RDONLY | O_CLOEXEC); }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
  std::string path_;
};

// The window's bytes [from, to), gathered piece by piece as a replica's send.
std::string Gather(const SharedSnapshot& s, uint64_t from, uint64_t to) {
  std::string out;
  while (from < to) {
    from = s.stream().ForEachPiece(from, to, 16, [&](io::SharedBlock*, const char* data, size_t n) {
      out.append(data, n);
    });
  }
  return out;
}

TEST(SharedSnapshotTest, ReadsTheFileOnceIntoAWindowAddressedByFileOffset) {
  TempFile file(3 * SharedSnapshot::kBlockSize + 1234);
  SharedSnapshot s(file.Open(), file.bytes().size());
  EXPECT_EQ(s.stream().end(), 0u);
  ASSERT_TRUE(s.FillTo(100000));
  EXPECT_EQ(s.stream().end(), 100000u);
  ASSERT_TRUE(s.FillTo(50));  // never backwards
  EXPECT_EQ(s.stream().end(), 100000u);
  ASSERT_TRUE(s.FillTo(UINT64_MAX));  // capped at the file's size
  EXPECT_EQ(s.stream().end(), file.bytes().size());
  EXPECT_EQ(Gather(s, 0, s.stream().end()), file.bytes());
  EXPECT_EQ(Gather(s, 70000, 70100), file.bytes().substr(70000, 100));
}

TEST(SharedSnapshotTest, TheWindowIsBoundedAndDropsWhatNobodyNeeds) {
  const size_t size = SharedSnapshot::kMaxHeld + 5 * SharedSnapshot::kBlockSize;
  TempFile file(size);
  SharedSnapshot s(file.Open(), size);
  ASSERT_TRUE(s.FillTo(size));
  EXPECT_EQ(s.stream().end(), SharedSnapshot::kMaxHeld);  // no more than kMaxHeld held
  s.DropBefore(2 * SharedSnapshot::kBlockSize + 10);      // whole blocks only
  EXPECT_EQ(s.stream().front_offset(), 2 * SharedSnapshot::kBlockSize);
  ASSERT_TRUE(s.FillTo(size));
  EXPECT_EQ(s.stream().end(), SharedSnapshot::kMaxHeld + 2 * SharedSnapshot::kBlockSize);
  EXPECT_EQ(Gather(s, s.stream().front_offset(), s.stream().end()),
            file.bytes().substr(s.stream().front_offset(), s.stream().end() - s.stream().front_offset()));
  s.DropBefore(UINT64_MAX);  // the last block stays
  EXPECT_EQ(s.stream().blocks(), 1u);
  // A replica left behind reads the same bytes itself.
  std::string buf(1000, '\0');
  ASSERT_EQ(s.ReadAt(buf.data(), buf.size(), 12345), 1000);
  EXPECT_EQ(buf, file.bytes().substr(12345, 1000));
}

TEST(SharedSnapshotTest, AFileShorterThanAnnouncedIsAnError) {
  TempFile file(1000);
  SharedSnapshot s(file.Open(), 5000);  // as if truncated after its size was taken
  EXPECT_FALSE(s.FillTo(5000));
  char c;
  EXPECT_EQ(s.ReadAt(&c, 1, 1000), 0);
}

}  // namespace
}  // namespace ringkv::repl
