#include "bench/suite/html_report.h"

#include "bench/suite/python_module.h"

namespace kiln::bench {

std::string write_html_report(const std::filesystem::path& json, const std::filesystem::path& html,
                              const std::filesystem::path& log) {
  auto status = run_python_module("kiln.bench_report", {json.string(), "-o", html.string()}, log);
  if (!status) return status.error().message();
  if (*status == 0) return "";
  return "python3 -m kiln.bench_report failed (needs the kiln Python package and matplotlib: "
         "scripts/install-python-deps.sh); its output is in " +
         log.string();
}

}  // namespace kiln::bench
