// Flags shared by the subcommands: the model file (and where its external data may live) and the
// session options. Every value is checked when parsed (a negative thread count, a zero byte
// limit, garbage after a number are errors, never silently taken).
#pragma once

#include <string>
#include <vector>

#include "pointrt/pointrt.h"
#include "tools/cli_common.h"

namespace pointrt::cli {

struct ModelFlags {
  std::string path;
  std::vector<std::string> external_data_dirs;
};
void add_model_flags(CLI::App* app, ModelFlags& flags);
Model load_model(const ModelFlags& flags);

struct SessionFlags {
  int threads = 0;
  std::string max_tensor_bytes;      // "" = the default (half the usable memory)
  std::vector<std::string> plugins;  // --plugin LIB.so (repeatable): SessionOptions::plugins
};
/// --plugin alone (inspect has no session flags but must know the plugins' operators).
void add_plugin_flag(CLI::App* app, std::vector<std::string>& plugins);
void add_session_flags(CLI::App* app, SessionFlags& flags);
SessionOptions session_options(const SessionFlags& flags);

}  // namespace pointrt::cli
