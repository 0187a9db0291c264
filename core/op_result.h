// OpStatus / OpResult<T>: the error vocabulary of keyspace operations.
//
// Operations in core/ never write replies; they return an OpStatus (or a
// value with one) and the command layer turns it into Redis's exact error
// text (server/errors.h). Cheap to return; no exceptions.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace ringkv::core {

enum class OpStatus : uint8_t {
  kOk,
  kNotFound,
  kWrongType,
  kNotInteger,    // value is not an integer or out of range
  kNotFloat,      // value is not a valid float
  kOverflow,      // increment or decrement would overflow
  kNanOrInf,      // increment would produce NaN or Infinity
  kTooBig,        // string exceeds proto-max-bulk-len
  kSkipped,       // NX/XX condition not met
  kOutOfRange,    // an index past the end (LSET)
};

template <typename T>
class OpResult {
 public:
  OpResult(T value) : value_(std::move(value)), status_(OpStatus::kOk) {}  // NOLINT: implicit by design
  OpResult(OpStatus status) : status_(status) {}                          // NOLINT
  bool ok() const { return status_ == OpStatus::kOk; }
  OpStatus status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }

 private:
  std::optional<T> value_;
  OpStatus status_;
};

}  // namespace ringkv::core
