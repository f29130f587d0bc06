// expect_error(f, {fragments}): f must throw pointrt::Error (nothing else) with a one-line
// message holding every fragment.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pointrt/pointrt.h"

namespace pointrt::test {

template <typename F>
void expect_error(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "expected pointrt::Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    for (const auto& frag : fragments)
      EXPECT_NE(msg.find(frag), std::string::npos) << "message: " << msg << "\nmissing: " << frag;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected pointrt::Error, got another exception: " << e.what();
  }
}

}  // namespace pointrt::test
