#include <gtest/gtest.h>

#include "pointrt/pointrt.h"

TEST(Smoke, TableHasRows) { EXPECT_FALSE(pointrt::supported_ops().empty()); }
