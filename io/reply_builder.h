// ReplyBuilder: encodes RESP2 / RESP3 replies into an OutBuffer.
//
// One builder per command execution; it borrows the OutBuffer it writes to
// and the protocol version of the client. Types that RESP2 lacks degrade the
// way Redis degrades them (map -> flat array, double -> bulk string, null ->
// $-1 or *-1, boolean -> integer, set -> array, push -> array).
//
// Error messages are passed without the leading '-' and must not contain
// CR or LF (they are replaced by spaces, as Redis does).
#pragma once

#include <cstdint>
#include <string_view>

#include "io/out_buffer.h"

namespace ringkv::io {

class ReplyBuilder {
 public:
  ReplyBuilder(OutBuffer* out, int resp) : out_(out), resp_(resp) {}

  int resp() const { return resp_; }
  OutBuffer* out() const { return out_; }
  uint64_t errors() const { return errors_; }

  void SimpleString(std::string_view s);
  void Ok() { out_->Append("+OK\r\n"); }
  // `msg` is the whole error line without '-', e.g. "ERR syntax error".
  void Error(std::string_view msg);
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

  OutBuffer* out_;
  int resp_;
  uint64_t errors_ = 0;
};

// Formats a double the way Redis replies with it: "%.17g" style shortest
// round-trip text, "inf" / "-inf", "nan" (RESP3). Returns the length written
// into buf (at least 32 bytes).
int FormatDouble(double v, char* buf);

// Writes the decimal text of v into buf (at least 21 bytes); returns length.
int FormatInt(int64_t v, char* buf);

}  // namespace ringkv::io
