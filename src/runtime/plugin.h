// Runtime plugins (include/pointrt/plugin.h): loading a plugin library and turning its operator
// definitions into operator-table rows. A session that has plugins (SessionOptions::plugins) works
// on its own table: the built-in rows plus the plugins' (session_op_table).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/kernel.h"

namespace pointrt {

/// Loads the plugin library at `path` (dlopen; a path without '/' is searched as dlopen does) and
/// appends a row per operator it defines to `table`. Errors (one line each, naming `path`): the
/// library cannot be loaded, it lacks the entry symbol, its ABI version differs from this
/// pointrt's, its entry point refuses, an operator definition is malformed (no domain or op type,
/// the ai.onnx or pointrt domain, bad opset or arity range, no infer or compute), or it defines an
/// operator the table already serves at an overlapping opset.
void add_plugin_rows(OpTable& table, const std::string& path);

/// The table a session with `plugins` uses: op_table() itself when there are none (no copy), else a
/// copy of it with every plugin's rows added, in order. Plugin libraries are loaded once per path.
std::shared_ptr<const OpTable> session_op_table(const std::vector<std::string>& plugins);

}  // namespace pointrt
