#include <gtest/gtest.h>

#include "core/support/result.h"

namespace kiln {
namespace {

TEST(Error, UserAndInternalReadDifferently) {
  EXPECT_EQ(Error::user("bad file").to_string(), "error: bad file");
  EXPECT_EQ(Error::internal("broken invariant").to_string(), "internal error: broken invariant");
  EXPECT_TRUE(Error::user("x").is_user());
  EXPECT_FALSE(Error::internal("x").is_user());
}

TEST(Error, ContextReadsOutermostFirst) {
  Error e =
      Error::user("no such file").with_context("reading weights").with_context("loading model");
  EXPECT_EQ(e.to_string(), "error: loading model: reading weights: no such file");
}

TEST(Result, HoldsValueOrError) {
  Result<int> ok = 42;
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 42);
  Result<int> bad = Error::user("nope");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "nope");
  Status status = Ok{};
  EXPECT_TRUE(status.has_value());
}

}  // namespace
}  // namespace kiln
