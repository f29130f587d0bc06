// The API boundary's error rule: whatever Model::load, Session's constructor or Session::run
// throws leaves as one pointrt::Error that names the file.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "core/common.h"

namespace pointrt {

/// Run `body`; whatever it throws leaves as one pointrt::Error that names `subject` (the file):
/// std::bad_alloc, std::length_error from a library, oneDNN's and protobuf's exceptions alike.
template <typename F>
auto with_error_context(const std::string& subject, F&& body) -> decltype(body()) {
  auto prefixed = [&](const std::string& what) {
    return what.compare(0, subject.size(), subject) == 0 ? what : subject + ": " + what;
  };
  try {
    return body();
  } catch (const Error& e) {
    throw Error(prefixed(e.what()));
  } catch (const std::bad_alloc&) {
    throw Error(prefixed("out of memory"));
  } catch (const std::exception& e) {
    throw Error(prefixed(str_cat("internal error (", e.what(), ")")));
  } catch (...) {
    throw Error(prefixed("internal error (an exception that is not a std::exception)"));
  }
}

}  // namespace pointrt
