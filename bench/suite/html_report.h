// The HTML report of a suite's results, drawn by the Python package's kiln.bench_report
// (matplotlib) with the python3 on PATH.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::bench {

// Writes `html` from `json`; "" when it did, else why not (the program's output is in `log`).
std::string write_html_report(const std::filesystem::path& json, const std::filesystem::path& html,
                              const std::filesystem::path& log);

}  // namespace kiln::bench
