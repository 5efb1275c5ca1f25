// The state of one cpp_openmp plugin instance, shared by the plugin's source files.
#pragma once

#include <kiln/plugin.hpp>
#include <string>
#include <vector>

#include "cpu_info.h"
#include "host_memory.h"

struct kiln_plugin {
  kiln::sdk::HostLog log;
  std::string compiler;
  std::vector<std::string> flags;
  uint32_t threads = 0;
  std::string fingerprint;  // changes whenever generated code may change
  kiln::cpu::CpuInfo cpu;
  kiln::sdk::PropertyList properties;
  kiln::cpu::HostMemory memory;
};
