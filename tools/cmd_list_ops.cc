// `pointrt list-ops`: every supported (domain, operator, opset range, types).
#include <iomanip>
#include <iostream>
#include <memory>

#include "pointrt/pointrt.h"
#include "tools/commands.h"

namespace pointrt::cli {

namespace {

std::string domain_label(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

std::string types_text(const std::vector<DType>& ts) {
  if (ts.empty()) return "any";
  std::string s;
  for (DType t : ts) s += (s.empty() ? "" : " ") + std::string(dtype_name(t));
  return s;
}

int list_ops(bool markdown, const Output& out) {
  auto ops = supported_ops();
  std::ostream& os = out.text();
  nlohmann::json j = nlohmann::json::array();
  for (const auto& o : ops)
    j.push_back({{"domain", domain_label(o.domain)},
                 {"op_type", o.op_type},
                 {"since", o.since_version},
                 {"until", o.until_version},
                 {"types", types_text(o.types)},
                 {"note", o.note}});
  if (markdown) {
    os << "| domain | operator | opsets | types | notes |\n|---|---|---|---|---|\n";
    for (const auto& o : ops)
      os << "| " << domain_label(o.domain) << " | " << o.op_type << " | " << o.since_version << "-" << o.until_version
         << " | " << types_text(o.types) << " | " << o.note << " |\n";
  } else {
    for (const auto& o : ops)
      os << std::left << std::setw(10) << domain_label(o.domain) << std::setw(28) << o.op_type << std::setw(8)
         << (std::to_string(o.since_version) + "-" + std::to_string(o.until_version)) << types_text(o.types)
         << (o.note.empty() ? "" : "  (" + o.note + ")") << "\n";
    os << ops.size() << " kernels\n";
  }
  out.write_json(j);
  return kExitOk;
}

}  // namespace

Subcommand add_list_ops_command(CLI::App& app) {
  auto* c = app.add_subcommand("list-ops", "every supported (domain, operator, opset range)");
  c->footer("Exit status: 0 success, 2 an error.");
  auto markdown = std::make_shared<bool>(false);
  auto json = std::make_shared<std::string>();
  c->add_flag("--markdown", *markdown, "print a Markdown table (docs/operators.md)");
  add_json_option(c, *json);
  return {c, [markdown, json] { return list_ops(*markdown, Output(*json)); }};
}

}  // namespace pointrt::cli
