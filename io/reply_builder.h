// ReplyBuilder: encodes RESP2 / RESP3 replies into an OutBuffer.
//
// One builder per command execution; it borrows the OutBuffer it writes to
// and the protocol version of the client. Types that RESP2 lacks degrade the
// way Redis degrades them (map -> flat array, double -> bulk string, null ->
// $-1 or *-1, boolean -> integer, set -> array, push -> array).
//
// Error messages are passed without the leading '-' and must not contain
// CR or LF (they are replaced by spaces, as Redis does). A builder given an
// ErrorReplyListener tells it of each error it writes (the server's error
// statistics); successful replies never touch it.
#pragma once

#include <cstdint>
#include <string_view>

#include "io/out_buffer.h"

namespace ringkv::io {

// Told of every error reply a ReplyBuilder writes.
class ErrorReplyListener {
 public:
  // `msg`: the error line as sent, without '-' and CR LF. `update_stats`:
  // false for an error already counted where it arose (a script returning
  // the error of a command it called).
  virtual void OnErrorReply(std::string_view msg, bool update_stats) = 0;

 protected:
  ~ErrorReplyListener() = default;
};

class ReplyBuilder {
 public:
  ReplyBuilder(OutBuffer* out, int resp, ErrorReplyListener* errors = nullptr)
      : out_(out), resp_(resp), errors_(errors) {}

  int resp() const { return resp_; }
  // The protocol of the replies written from now on (HELLO inside EXEC:
  // the transaction's later replies use the new one, as in Redis).
  void set_resp(int resp) { resp_ = resp; }
  OutBuffer* out() const { return out_; }
  ErrorReplyListener* error_listener() const { return errors_; }

  void SimpleString(std::string_view s);
  void Ok() { out_->Append("+OK\r\n"); }
  // `msg` is the whole error line without '-', e.g. "ERR syntax error".
  void Error(std::string_view msg) { WriteError(msg, true); }
  // An error already counted where it arose (Redis's
  // ERR_REPLY_FLAG_NO_STATS_UPDATE): the listener hears of it, stats aside.
  void ErrorNoStats(std::string_view msg) { WriteError(msg, false); }
  void Integer(int64_t v);
  void Bulk(std::string_view s);
  // Null bulk string ($-1 / _).
  void Null();
  // Null array (*-1 / _).
  void NullArray();
  void ArrayHeader(int64_t n);
  void MapHeader(int64_t pairs);
  void SetHeader(int64_t n);
  void PushHeader(int64_t n);
  // RESP3 only: callers emit nothing for RESP2 clients (attributes are not replies).
  void AttributeHeader(int64_t n) { Header('|', n); }
  void Double(double v);
  void Bool(bool v);
  void Verbatim(std::string_view s, std::string_view format = "txt");
  void BigNumber(std::string_view digits);
  // Bytes already encoded as RESP.
  void Raw(std::string_view s) { out_->Append(s); }

 private:
  void Header(char type, int64_t n);
  void WriteError(std::string_view msg, bool update_stats);

  OutBuffer* out_;
  int resp_;
  ErrorReplyListener* errors_;
};

// Formats a double the way Redis replies with it: "%.17g" style shortest
// round-trip text, "inf" / "-inf", "nan" (RESP3). Returns the length written
// into buf (at least 32 bytes).
int FormatDouble(double v, char* buf);

// Writes the decimal text of v into buf (at least 21 bytes); returns length.
int FormatInt(int64_t v, char* buf);

}  // namespace ringkv::io
