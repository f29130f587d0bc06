// The `pointrt` subcommands; each lives in tools/cmd_<name>.cc and follows tools/cli_common.h.
#pragma once

#include "tools/cli_common.h"

namespace pointrt::cli {

Subcommand add_inspect_command(CLI::App& app);
Subcommand add_run_command(CLI::App& app);
Subcommand add_bench_command(CLI::App& app);
Subcommand add_list_ops_command(CLI::App& app);
/// compare and check: handed to the Python package (tools/cmd_python_tools.cc).
Subcommand add_compare_command(CLI::App& app);
Subcommand add_check_command(CLI::App& app);

}  // namespace pointrt::cli
