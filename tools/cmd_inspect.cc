// `pointrt inspect MODEL [--passes]`: inputs/outputs, opsets, operator histogram, warnings,
// unsupported nodes; with --passes the prepare passes in order and what each did to this model.
#include <algorithm>
#include <iomanip>
#include <map>

#include "core/common.h"
#include "graph/onnx_import.h"
#include "ops/kernel.h"
#include "runtime/plugin.h"
#include "runtime/prepare.h"
#include "tools/cli_options.h"
#include "tools/commands.h"

namespace pointrt::cli {

namespace {

std::string domain_label(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

nlohmann::json value_json(const ValueInfo& v) {
  nlohmann::json shape = nullptr;
  if (v.has_shape) {
    shape = nlohmann::json::array();
    for (const Dim& d : v.shape)
      shape.push_back(d.is_fixed() ? nlohmann::json(d.value) : nlohmann::json(d.symbol.empty() ? "?" : d.symbol));
  }
  nlohmann::json j = {{"name", v.name}, {"dtype", dtype_name(v.dtype)}, {"shape", shape}};
  // Sequences and optionals: dtype and shape are the tensor's or the elements'.
  if (!v.is_tensor()) j.update({{"kind", v.optional ? "optional" : "sequence"}, {"type", v.type_string()}});
  return j;
}

// Numerics a deployed model rarely means, and settings users compare with PyTorch by hand.
std::vector<std::string> model_warnings(const Graph& g) {
  std::vector<std::string> warnings;
  for (const auto& n : g.nodes) {
    if (!n.domain.empty()) continue;
    if (n.op_type == "BatchNormalization" && n.opset >= 14 && n.attrs.get_int("training_mode", 0) != 0)
      warnings.push_back(n.describe() +
                         " is in training mode: it normalises with batch statistics, not the running ones"
                         " (export after model.eval())");
    if (n.op_type == "Dropout" && n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const auto& v = g.values[n.inputs[2]];
      if (!v.constant || (v.constant->numel() == 1 && v.constant->data_as<uint8_t>()[0]))
        warnings.push_back(n.describe() + " may run in training mode (training_mode input '" + v.name + "')");
    }
    if (n.op_type == "Resize" || n.op_type == "Upsample")
      warnings.push_back(str_cat(
          "note: ", n.describe(), " mode=", n.attrs.get_string("mode", "nearest"),
          " coordinate_transformation_mode=", n.attrs.get_string("coordinate_transformation_mode", "half_pixel"),
          n.attrs.get_string("mode", "nearest") == "nearest"
              ? " nearest_mode=" + n.attrs.get_string("nearest_mode", "round_prefer_floor")
              : ""));
  }
  return warnings;
}

// The prepare passes in order, run on a copy of the model's graph: what each changed.
void print_passes(const detail::ModelImpl& m, const OpTable& table, std::ostream& os, nlohmann::json& j) {
  std::vector<GraphPass> passes = prepare_passes(SessionOptions{}, m.path, table);
  Graph g = m.graph;
  std::vector<PassReport> reports;
  os << "prepare passes (" << m.graph.nodes.size() << " nodes before):\n";
  std::string error;
  try {
    run_passes(g, passes, &reports);
  } catch (const Error& e) {
    error = e.what();
  }
  j["passes"] = nlohmann::json::array();
  size_t width = 0;  // the longest name, so that the columns line up
  for (const GraphPass& p : passes) width = std::max(width, p.name.size());
  for (size_t i = 0; i < passes.size(); ++i) {
    nlohmann::json row = {{"name", passes[i].name}, {"description", passes[i].description}};
    os << "  " << std::setw(2) << i + 1 << ". " << std::left << std::setw(static_cast<int>(width) + 1) << passes[i].name
       << std::right;
    if (i < reports.size()) {
      os << (reports[i].changed ? "changed" : "no change") << ", " << reports[i].nodes_after << " nodes, " << std::fixed
         << std::setprecision(2) << reports[i].milliseconds << " ms";
      row.update({{"changed", reports[i].changed},
                  {"nodes_after", reports[i].nodes_after},
                  {"milliseconds", reports[i].milliseconds}});
    } else {
      os << (i == reports.size() ? "FAILED (below)" : "not run");
      row["status"] = i == reports.size() ? "failed" : "not run";
    }
    os << "  (" << passes[i].description << ")\n";
    j["passes"].push_back(row);
  }
  if (!error.empty()) os << "  " << error << "\n";
  if (!error.empty()) j["passes_error"] = error;
  os << "then: the executor builds one kernel per node (packed weights), value lifetimes, and releases "
        "constants kept only as packed copies\n";
}

int inspect(const ModelFlags& flags, const std::vector<std::string>& plugins, bool show_passes, const Output& out) {
  std::shared_ptr<const OpTable> table = session_op_table(plugins);
  Model model = load_model(flags);
  const auto& m = *model.impl();
  std::ostream& os = out.text();
  nlohmann::json j = {{"model", flags.path}, {"ir_version", m.ir_version}, {"producer", m.producer}};
  os << "model: " << flags.path << "\n";
  os << "ir_version: " << m.ir_version << (m.producer.empty() ? "" : ", producer: " + m.producer) << "\n";
  os << "opsets:";
  for (const auto& [d, v] : m.graph.opsets) {
    os << " " << domain_label(d) << "=" << v;
    j["opsets"][domain_label(d)] = v;
  }
  os << "\n";
  j["notes"] = m.import_notes;
  for (const auto& n : m.import_notes) os << "note: " << n << "\n";
  os << "inputs:\n";
  for (const auto& v : model.inputs()) {
    os << "  " << v.to_string() << "\n";
    j["inputs"].push_back(value_json(v));
  }
  os << "outputs:\n";
  for (const auto& v : model.outputs()) {
    os << "  " << v.to_string() << "\n";
    j["outputs"].push_back(value_json(v));
  }
  size_t weights = 0, weight_bytes = 0;
  for (const auto& v : m.graph.values)
    if (v.constant) {
      ++weights;
      weight_bytes += v.constant->nbytes();
    }
  os << "initializers: " << weights << " (" << std::fixed << std::setprecision(2) << weight_bytes / 1048576.0
     << " MiB)\n";
  j["initializers"] = {{"count", weights}, {"bytes", weight_bytes}};
  std::map<std::pair<std::string, std::string>, int> histogram;
  std::vector<std::string> unsupported;
  for (const auto& n : m.graph.nodes) {
    ++histogram[{n.domain, n.op_type}];
    if (!table->find(n.domain, n.op_type, n.opset)) unsupported.push_back(str_cat(n.describe(), " at opset ", n.opset));
  }
  os << "nodes: " << m.graph.nodes.size() << "\n";
  j["nodes"] = m.graph.nodes.size();
  std::vector<std::pair<int, std::string>> rows;
  for (const auto& [k, c] : histogram) rows.push_back({c, (k.first.empty() ? "" : k.first + "::") + k.second});
  std::sort(rows.begin(), rows.end(),
            [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (const auto& [c, name] : rows) {
    os << "  " << std::setw(5) << c << "  " << name << "\n";
    j["operators"][name] = c;
  }
  std::vector<std::string> warnings = model_warnings(m.graph);
  for (const auto& w : warnings) os << (w.rfind("note: ", 0) == 0 ? "" : "warning: ") << w << "\n";
  j["warnings"] = warnings;
  if (unsupported.empty())
    os << "unsupported: none (every node has a kernel)\n";
  else {
    os << "unsupported: " << unsupported.size() << " node(s)\n";
    for (const auto& u : unsupported) os << "  " << u << "\n";
  }
  j["unsupported"] = unsupported;
  if (show_passes) print_passes(m, *table, os, j);
  out.write_json(j);
  return unsupported.empty() ? kExitOk : kExitCheckFailed;
}

}  // namespace

Subcommand add_inspect_command(CLI::App& app) {
  auto* c = app.add_subcommand("inspect", "inputs/outputs, opsets, operator histogram, unsupported nodes");
  c->footer("Exit status: 0 every node has a kernel, 1 some node is unsupported (listed), 2 an error.");
  auto flags = std::make_shared<ModelFlags>();
  auto json = std::make_shared<std::string>();
  add_model_flags(c, *flags);
  add_json_option(c, *json);
  auto show_passes = std::make_shared<bool>(false);
  c->add_flag("--passes", *show_passes, "list the prepare passes in order and what each changed in this model");
  auto plugins = std::make_shared<std::vector<std::string>>();
  add_plugin_flag(c, *plugins);
  return {c, [flags, plugins, show_passes, json] { return inspect(*flags, *plugins, *show_passes, Output(*json)); }};
}

}  // namespace pointrt::cli
