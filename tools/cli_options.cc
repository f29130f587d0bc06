#include "tools/cli_options.h"

#include "core/checked_size.h"

namespace pointrt::cli {

void add_model_flags(CLI::App* app, ModelFlags& flags) {
  app->add_option("model", flags.path, "ONNX file")->required();
  app->add_option("--external-data-dir", flags.external_data_dirs,
                  "another folder external data may be read from (besides the model's own; symbolic links are "
                  "resolved before the check)")
      ->type_name("DIR");
}

Model load_model(const ModelFlags& flags) {
  LoadOptions o;
  o.external_data_dirs = flags.external_data_dirs;
  return Model::load(flags.path, o);
}

void add_plugin_flag(CLI::App* app, std::vector<std::string>& plugins) {
  app->add_option("--plugin", plugins,
                  "a runtime plugin library (include/pointrt/plugin.h) whose operators the model uses; repeatable")
      ->type_name("LIB.so");
}

void add_session_flags(CLI::App* app, SessionFlags& flags) {
  add_plugin_flag(app, flags.plugins);
  app->add_option("--threads", flags.threads, "intra-op threads (0 = all cores)")->check(kNonNegative);
  app->add_option("--max-tensor-bytes", flags.max_tensor_bytes, "largest tensor a node may allocate, e.g. 512M, 8G")
      ->type_name("BYTES")
      ->default_str("half the usable memory, " + format_bytes(default_max_tensor_bytes()))
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            try {
              parse_byte_count(s, "--max-tensor-bytes");
            } catch (const Error& e) {
              return e.what();
            }
            return "";
          },
          ""));
}

SessionOptions session_options(const SessionFlags& flags) {
  SessionOptions o;
  o.intra_op_threads = flags.threads;
  o.plugins = flags.plugins;
  if (!flags.max_tensor_bytes.empty())
    o.max_tensor_bytes = parse_byte_count(flags.max_tensor_bytes, "--max-tensor-bytes");
  return o;
}

}  // namespace pointrt::cli
