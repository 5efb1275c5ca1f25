// Runs a module of the kiln Python package (`python3 -m kiln.NAME ARGS...`) with the python3
// on PATH, its output to a log file: how `kiln bench` draws its report and runs PyTorch's
// reference cells.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/support/result.h"

namespace kiln::bench {

// The module's exit status; an error when python3 cannot start or the module dies by a signal.
Result<int> run_python_module(const std::string& module, const std::vector<std::string>& args,
                              const std::filesystem::path& log);

// A file's text ("" when unreadable), and the last `lines` lines of it: what a module said
// before it failed, for an error that says why.
std::string read_file_text(const std::filesystem::path& path);
std::string log_tail(const std::filesystem::path& path, size_t lines);

}  // namespace kiln::bench
