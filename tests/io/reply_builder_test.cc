#include "io/reply_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace ringkv::io {
namespace {

std::string Encode(int resp, void (*fn)(ReplyBuilder&)) {
  OutBuffer out;
  ReplyBuilder rb(&out, resp);
  fn(rb);
  return out.ToString();
}

TEST(ReplyBuilderTest, Resp2Types) {
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.SimpleString("OK"); }), "+OK\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Error("ERR bad\r\nline"); }), "-ERR bad  line\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Integer(-42); }), ":-42\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Bulk("hello"); }), "$5\r\nhello\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Bulk(""); }), "$0\r\n\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Null(); }), "$-1\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.NullArray(); }), "*-1\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.MapHeader(2); }), "*4\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.SetHeader(3); }), "*3\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.PushHeader(3); }), "*3\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Double(1.5); }), "$3\r\n1.5\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Double(INFINITY); }), "$3\r\ninf\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Bool(true); }), ":1\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Verbatim("abc"); }), "$3\r\nabc\r\n");
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.BigNumber("123"); }), "$3\r\n123\r\n");
}

TEST(ReplyBuilderTest, Resp3Types) {
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.Null(); }), "_\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.NullArray(); }), "_\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.MapHeader(2); }), "%2\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.SetHeader(3); }), "~3\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.PushHeader(3); }), ">3\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.Double(1.5); }), ",1.5\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.Double(-INFINITY); }), ",-inf\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.Bool(false); }), "#f\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.Verbatim("abc"); }), "=7\r\ntxt:abc\r\n");
  EXPECT_EQ(Encode(3, [](ReplyBuilder& r) { r.BigNumber("123"); }), "(123\r\n");
}

TEST(ReplyBuilderTest, DoubleUsesSeventeenDigits) {
  EXPECT_EQ(Encode(2, [](ReplyBuilder& r) { r.Double(0.1); }), "$19\r\n0.10000000000000001\r\n");
}

TEST(ReplyBuilderTest, LargeBulkSpansChunks) {
  std::string big(3 * ReplyChunk::kCapacity + 17, 'z');
  OutBuffer out;
  ReplyBuilder rb(&out, 2);
  rb.Bulk(big);
  EXPECT_EQ(out.ToString(), "$" + std::to_string(big.size()) + "\r\n" + big + "\r\n");
}

// The listener hears each error as sent (CR/LF already replaced) and whether
// it counts in the statistics; other replies never reach it.
TEST(ReplyBuilderTest, ErrorListenerSeesErrorsOnly) {
  struct Recorder final : ErrorReplyListener {
    std::vector<std::pair<std::string, bool>> seen;
    void OnErrorReply(std::string_view msg, bool update_stats) override { seen.emplace_back(msg, update_stats); }
  } recorder;
  OutBuffer out;
  ReplyBuilder rb(&out, 2, &recorder);
  rb.Ok();
  rb.Bulk("x");
  rb.Error("WRONGTYPE a\nb");
  rb.ErrorNoStats("ERR counted before");
  EXPECT_EQ(out.ToString(), "+OK\r\n$1\r\nx\r\n-WRONGTYPE a b\r\n-ERR counted before\r\n");
  ASSERT_EQ(recorder.seen.size(), 2u);
  EXPECT_EQ(recorder.seen[0], std::make_pair(std::string("WRONGTYPE a b"), true));
  EXPECT_EQ(recorder.seen[1], std::make_pair(std::string("ERR counted before"), false));
}

}  // namespace
}  // namespace ringkv::io
