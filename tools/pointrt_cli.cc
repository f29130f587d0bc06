// The `pointrt` command line: inspect, run, bench, list-ops, compare, check (conventions: tools/cli_common.h).
#include "pointrt/pointrt.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  using namespace pointrt::cli;
  CLI::App app{"pointrt: run ONNX point-cloud networks on the CPU"};
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", pointrt::build_info(), "print the versions of pointrt, ONNX, oneDNN and the build");
  app.require_subcommand(1);
  app.footer("Exit status: 0 success, 1 a check failed (run --ref, inspect: unsupported nodes), 2 an error.");
  std::vector<Subcommand> subcommands = {add_inspect_command(app),  add_run_command(app),     add_bench_command(app),
                                         add_list_ops_command(app), add_compare_command(app), add_check_command(app)};
  return parse_and_run(app, subcommands, argc, argv);
}
