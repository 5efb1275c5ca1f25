// Loading Options from YAML and the environment. Unknown keys, wrong types and malformed
// YAML are user errors that name file:line:col and the key.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/config/environment.h"
#include "core/config/options.h"
#include "core/support/result.h"

namespace kiln {

// The config text kiln uses when no file is given: configs/default.yaml, built in.
std::string_view builtin_default_config();

// Parses `yaml` (named `source` in messages; relative paths resolve against `base_dir`),
// then applies the environment overrides.
Result<Options> parse_options(std::string_view yaml, const std::string& source,
                              const std::string& base_dir, const Environment& env);

// The config file is `config_file` if given, else $KILN_CONFIG, else the built-in default.
Result<Options> load_options(const std::optional<std::string>& config_file, const Environment& env);

}  // namespace kiln
