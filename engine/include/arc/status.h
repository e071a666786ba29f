// Status and Result<T>: how every engine API reports failure.
//
// Messages are written for the person who will read them: say what was wrong and what to change
// ("tensor 'blk.3.attn_q.weight' ends at byte 9,437,184 but the file has 8,388,608 bytes; the file
// is truncated, download it again"), never just "invalid argument".
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace arc {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,     // the caller's input is wrong (bad flag, bad request field)
  kNotFound = 2,            // a file, model, tensor or route that does not exist
  kOutOfRange = 3,          // a value or offset past a limit
  kDataLoss = 4,            // a file is truncated or corrupt
  kUnimplemented = 5,       // valid input that this build does not support (yet)
  kResourceExhausted = 6,   // memory, KV blocks, context length
  kFailedPrecondition = 7,  // wrong state (no model loaded, already loading)
  kInternal = 8,            // a bug in Arclight
  kUnavailable = 9,         // a peer (rank, engine, device) is gone
  kCancelled = 10,          // the caller stopped the work
  kIo = 11,                 // the OS refused a read, write, map or socket call
  kDeadlineExceeded = 12,   // a bounded wait ran out
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "DATA_LOSS: tensor ... truncated" — for logs and command-line errors.
  std::string to_string() const;

  // Prefixes context: Status("x").with_context("loading model.gguf") -> "loading model.gguf: x".
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status ok_status() {
  return {};
}
inline Status invalid_argument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status not_found(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status out_of_range(std::string m) {
  return {StatusCode::kOutOfRange, std::move(m)};
}
inline Status data_loss(std::string m) {
  return {StatusCode::kDataLoss, std::move(m)};
}
inline Status unimplemented(std::string m) {
  return {StatusCode::kUnimplemented, std::move(m)};
}
inline Status resource_exhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status failed_precondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status internal_error(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}
inline Status unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status cancelled(std::string m) {
  return {StatusCode::kCancelled, std::move(m)};
}
inline Status io_error(std::string m) {
  return {StatusCode::kIo, std::move(m)};
}
inline Status deadline_exceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}

// Result<T>: a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "Result<Status> makes no sense");

 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status has no value");
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "Result from OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const& { return ok() ? std::get<T>(v_) : std::move(fallback); }

 private:
  std::variant<T, Status> v_;
};

namespace detail {
inline Status to_status(Status s) {
  return s;
}
template <typename T>
Status to_status(const Result<T>& r) {
  return r.status();
}
}  // namespace detail

}  // namespace arc

#define ARC_CONCAT_INNER_(a, b) a##b
#define ARC_CONCAT_(a, b) ARC_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function when expr (a Status or Result) failed.
#define ARC_RETURN_IF_ERROR(expr)                             \
  do {                                                        \
    auto&& arc_status_or_result_ = (expr);                    \
    if (!arc_status_or_result_.ok()) {                        \
      return ::arc::detail::to_status(arc_status_or_result_); \
    }                                                         \
  } while (0)

// ARC_ASSIGN_OR_RETURN(auto x, make_x()); declares/assigns x or returns the error.
#define ARC_ASSIGN_OR_RETURN(lhs, expr) \
  ARC_ASSIGN_OR_RETURN_IMPL_(ARC_CONCAT_(arc_result_, __LINE__), lhs, expr)
#define ARC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
