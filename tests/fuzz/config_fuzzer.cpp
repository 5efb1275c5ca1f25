// libFuzzer target: any bytes as a YAML config through the loader deployers' files go
// through. Every failure must come back as an Error naming where; nothing may crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/config/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  kiln::Environment env;
  env.home = "/nonexistent-home";
  (void)kiln::parse_options(yaml, "fuzz.yaml", "/nonexistent-base", env);
  return 0;
}
