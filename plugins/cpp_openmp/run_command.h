// Starts a program without a shell and waits for it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::cpu {

// Runs argv (argv[0] looked up on PATH) with stdout and stderr going to `log`; returns the
// exit status, or -1 when the program cannot be started or does not exit normally.
int run_command(const std::vector<std::string>& argv, const std::filesystem::path& log);

// argv joined by spaces, for messages.
std::string joined(const std::vector<std::string>& argv);

}  // namespace kiln::cpu
