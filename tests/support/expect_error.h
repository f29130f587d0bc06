// expect_error(f, {fragments}): f must throw pointrt::Error (nothing else) with a one-line
// message holding every fragment. expect_error_with(f, {fragments}): f must throw a pointrt::Error
// whose message (of any number of lines) holds every fragment.
#pragma once

#include <gtest/gtest.h>

#include <functional>
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

/// Expect a pointrt::Error whose message contains every fragment.
template <typename F>
void expect_error_with(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& frag : fragments)
      EXPECT_NE(msg.find(frag), std::string::npos) << "missing '" << frag << "' in: " << msg;
    return;
  }
  ADD_FAILURE() << "expected pointrt::Error";
}

/// The error text of `f`, or "<no error>" (for tests that look at the message themselves).
inline std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace pointrt::test
