// `pointrt compare ...` and `pointrt check ...`: the two tools live in the Python package
// (python/pointrt/compare_*.py, check.py): compare runs the user's PyTorch module, check needs ONNX's
// schemas up to opset 21 (the onnx wheel). These subcommands hand every argument over to
// `python -m pointrt <tool>` with exec, so exit status and output are the tool's own.
//
// Which interpreter: $POINTRT_PYTHON; else python3/python next to this executable (a venv's bin/, where
// `pip install ./python` puts the CLI); else the interpreter the build was configured with; else
// python3 on PATH. A CLI run from its build folder also puts the checkout's python/ first on PYTHONPATH.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/common.h"
#include "tools/commands.h"

#ifndef POINTRT_CONFIGURED_PYTHON
#define POINTRT_CONFIGURED_PYTHON ""
#endif
#ifndef POINTRT_BUILD_DIR
#define POINTRT_BUILD_DIR ""
#endif
#ifndef POINTRT_SOURCE_PYTHON_DIR
#define POINTRT_SOURCE_PYTHON_DIR ""
#endif

namespace pointrt::cli {

namespace {

std::string executable_dir() {
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  std::string path(buf.data(), static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

bool executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

std::vector<std::string> python_candidates() {
  std::vector<std::string> c;
  if (const char* env = std::getenv("POINTRT_PYTHON"); env && *env) c.push_back(env);
  const std::string dir = executable_dir();
  if (!dir.empty()) {
    c.push_back(dir + "/python3");
    c.push_back(dir + "/python");
  }
  c.push_back(POINTRT_CONFIGURED_PYTHON);
  return c;
}

// The bootstrap: a missing or broken package is one line and exit status 2, as every pointrt error.
const char* kBootstrap =
    "import sys\n"
    "try:\n"
    "    from pointrt.__main__ import main\n"
    "except Exception as e:\n"
    "    sys.stderr.write('error: pointrt %s needs the pointrt Python package (scripts/setup.sh, or pip install "
    "./python), which %s cannot import: %s\\n' % (sys.argv[1], sys.executable, e))\n"
    "    sys.exit(2)\n"
    "sys.exit(main(sys.argv[1:]))\n";

[[noreturn]] void exec_python_tool(const std::string& tool, const std::vector<std::string>& args) {
  std::string python;
  for (const std::string& p : python_candidates())
    if (executable(p)) {
      python = p;
      break;
    }
  if (python.empty()) python = "python3";  // execvp searches PATH
  const std::string dir = executable_dir();
  if (!dir.empty() && dir == POINTRT_BUILD_DIR && *POINTRT_SOURCE_PYTHON_DIR) {
    const char* old = std::getenv("PYTHONPATH");
    std::string path = std::string(POINTRT_SOURCE_PYTHON_DIR) + (old && *old ? std::string(":") + old : "");
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  std::vector<std::string> argv_s = {python, "-c", kBootstrap, tool};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  fail("pointrt ", tool, ": cannot start the Python interpreter '", python,
       "' (set POINTRT_PYTHON to one that has the pointrt package): ", std::strerror(errno));
}

Subcommand add_python_tool(CLI::App& app, const std::string& tool, const std::string& description) {
  auto* c = app.add_subcommand(tool, description + " (runs `python -m pointrt " + tool + "`; see " + tool + " --help)");
  c->set_help_flag();  // --help goes to the Python tool, whose options these are
  c->allow_extras();
  c->prefix_command();
  return {c, [c, tool] {
            exec_python_tool(tool, c->remaining());
            return kExitError;
          }};
}

}  // namespace

Subcommand add_compare_command(CLI::App& app) {
  return add_python_tool(app, "compare", "per layer, where the values drift from PyTorch, ONNX Runtime or saved ones");
}

Subcommand add_check_command(CLI::App& app) {
  return add_python_tool(app, "check", "will the file run on a target (pointrt, onnxruntime, tensorrt, opset=N)");
}

}  // namespace pointrt::cli
