// Conventions every `pointrt` subcommand follows, in one place (tools/cmd_*.cc call these):
//  - exit status: 0 success, 1 a check failed (run --ref mismatch, inspect's unsupported nodes,
//    check), 2 an error (bad argument, unreadable or invalid file, failed run);
//  - an error is one line "error: <message>" on stderr;
//  - `--json FILE` writes a machine-readable summary; FILE "-" writes it to stdout, and the
//    human-readable text then goes to stderr;
//  - every option shows its default in --help.
// A subcommand is a function `Subcommand add_<name>_command(CLI::App& app)` listed in
// tools/commands.h and in main (tools/pointrt_cli.cc).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pointrt::cli {

enum ExitCode : int { kExitOk = 0, kExitCheckFailed = 1, kExitError = 2 };

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  // returns an ExitCode
};

/// Parse argv and run the chosen subcommand: CLI11 errors, an unknown subcommand and any
/// exception become "error: ..." and kExitError; --help and --version exit 0.
int parse_and_run(CLI::App& app, const std::vector<Subcommand>& subcommands, int argc, char** argv);

/// Where a subcommand writes: text for people, and the optional JSON summary.
class Output {
 public:
  /// `json_dest`: "" (no JSON), "-" (stdout; text goes to stderr) or a file.
  explicit Output(std::string json_dest = "");
  std::ostream& text() const;
  bool json_enabled() const { return !dest_.empty(); }
  /// Write the summary (no-op without --json). Errors name the file.
  void write_json(const nlohmann::json& summary) const;

 private:
  std::string dest_;
};

/// `--json FILE` ("-" = stdout) on a subcommand.
CLI::Option* add_json_option(CLI::App* app, std::string& dest);

/// Validators for options that must not silently take a nonsense value.
extern const CLI::Validator kNonNegative;        // >= 0
extern const CLI::Validator kPositive;           // >= 1
extern const CLI::Validator kFiniteNonNegative;  // finite floating value >= 0

}  // namespace pointrt::cli
