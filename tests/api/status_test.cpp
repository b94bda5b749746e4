#include <gtest/gtest.h>

#include <type_traits>

#include <rstorm/status.hpp>

namespace rstorm::api {
namespace {

template <typename T>
concept Testable = requires(const T& t) { !t; };

// C++ lets an instance call a static member: on a Status s, s.ok() is
// Status::ok(). If that were a Status, `if (!s.ok())` would test a new ok
// Status, never s, and let every error through. It is an OkStatus instead:
// an ok Status wherever one is expected, a compile error where tested.
TEST(Status, OkIsAnOkStatusWhereverOneIsExpectedAndCannotBeTested) {
  static_assert(Testable<Status>);
  static_assert(!Testable<OkStatus>);
  static_assert(!std::is_constructible_v<bool, OkStatus>);
  static_assert(std::is_convertible_v<OkStatus, Status>);

  const Status made = Status::ok();
  EXPECT_TRUE(made.is_ok());
  const auto pick = [](bool good) -> Status {
    return good ? Status::ok() : Status::error("the stream 'x' is not declared");
  };
  EXPECT_TRUE(pick(true).is_ok());
  EXPECT_FALSE(pick(false).is_ok());
  EXPECT_EQ(pick(false).message(), "the stream 'x' is not declared");
  const Result<int> failed = Status::error("no");
  EXPECT_FALSE(failed.ok());  // Result<T>::ok() is a test
}

}  // namespace
}  // namespace rstorm::api
