#include "tools/cli_common.h"

#include <cmath>
#include <fstream>
#include <iostream>

#include "core/common.h"

namespace pointrt::cli {

namespace {
std::string subcommand_names(const std::vector<Subcommand>& subs) {
  std::string s;
  for (const auto& c : subs) s += (s.empty() ? "" : ", ") + c.app->get_name();
  return s;
}

int report_error(const std::string& message) {
  std::cout.flush();
  std::cerr << "error: " << message << "\n";
  return kExitError;
}
}  // namespace

// An integer option of at least `min` (CLI11 would take "-3" threads or "0" iterations).
static CLI::Validator int_at_least(long long min) {
  return CLI::Validator(
      [min](std::string& s) -> std::string {
        try {
          size_t used = 0;
          long long v = std::stoll(s, &used);
          if (used == s.size() && v >= min) return "";
        } catch (...) {}
        return str_cat("must be an integer >= ", min, ", got '", s, "'");
      },
      str_cat("INT>=", min));
}

const CLI::Validator kNonNegative = int_at_least(0);
const CLI::Validator kPositive = int_at_least(1);

const CLI::Validator kFiniteNonNegative = CLI::Validator(
    [](std::string& s) -> std::string {
      try {
        size_t used = 0;
        double v = std::stod(s, &used);
        if (used == s.size() && std::isfinite(v) && v >= 0) return "";
      } catch (...) {}
      return "must be a finite number >= 0, got '" + s + "'";
    },
    "FLOAT>=0");

int parse_and_run(CLI::App& app, const std::vector<Subcommand>& subcommands, int argc, char** argv) {
  if (argc >= 2 && argv[1][0] != '-') {
    std::string name = argv[1];
    bool known = false;
    for (const auto& c : subcommands) known |= c.app->check_name(name);
    if (!known)
      return report_error(str_cat("unknown subcommand '", name, "' (subcommands: ", subcommand_names(subcommands),
                                  "; see pointrt --help)"));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::RequiredError& e) {
    if (app.get_subcommands().empty())
      return report_error(
          str_cat("a subcommand is required (", subcommand_names(subcommands), "; see pointrt --help)"));
    return report_error(e.what());
  } catch (const CLI::ParseError& e) {
    return report_error(e.what());
  }
  for (const auto& c : subcommands)
    if (c.app->parsed()) {
      try {
        return c.run();
      } catch (const std::exception& e) {
        return report_error(e.what());
      }
    }
  return report_error("no subcommand given (see pointrt --help)");
}

Output::Output(std::string json_dest) : dest_(std::move(json_dest)) {}

std::ostream& Output::text() const { return dest_ == "-" ? std::cerr : std::cout; }

void Output::write_json(const nlohmann::json& summary) const {
  if (dest_.empty()) return;
  // Names from a file may be any bytes: replace invalid UTF-8 instead of throwing.
  std::string text = summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (dest_ == "-") {
    std::cout << text << std::flush;
    return;
  }
  std::ofstream f(dest_);
  if (!f) fail(dest_, ": cannot write the JSON summary");
  f << text;
  if (!f) fail(dest_, ": writing the JSON summary failed");
}

CLI::Option* add_json_option(CLI::App* app, std::string& dest) {
  return app->add_option("--json", dest, "write a JSON summary to FILE ('-' = stdout, the text then goes to stderr)")
      ->type_name("FILE")
      ->default_str("none");
}

}  // namespace pointrt::cli
