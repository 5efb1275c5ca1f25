// The state of one cpp_openmp plugin instance, shared by the plugin's source files.
#pragma once

#include <filesystem>
#include <kiln/plugin.hpp>
#include <kiln/shared_fd_memory.hpp>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cpu_info.h"
#include "host_memory.h"
#include "onednn_library.h"

struct kiln_plugin {
  kiln::sdk::HostLog log;
  std::string compiler;
  std::string compiler_version;      // the first line of `compiler --version`
  std::vector<std::string> flags;    // from the config
  std::vector<std::string> shipped;  // headers and libraries found beside the plugin
  uint32_t threads = 0;
  int vector_width = 8;     // lanes of generated vector loops (krt::kLanes)
  std::string fingerprint;  // changes whenever generated code may change
  kiln::cpu::CpuInfo cpu;
  kiln::sdk::PropertyList properties;
  kiln::cpu::HostMemory memory;
  kiln::sdk::SharedFdMappings imports;  // ABI 1.3 mem_import; unmapped before `memory` ends
  // oneDNN, opened on the first question about externs (code_functions.cpp: conv_library).
  std::string onednn_option;
  std::mutex onednn_mutex;
  // The precompiled runtime header per lane count, found or made on the first compile with
  // it (code_functions.cpp: header_dir; an empty path where none can be used);
  // `header_cache` empty when the option turns it off.
  std::filesystem::path header_cache;
  std::mutex header_mutex;
  std::map<int, std::filesystem::path> header_dirs;
  bool onednn_tried = false;
  kiln::cpu::OnednnLibrary onednn;

  std::vector<std::string> all_flags() const {
    std::vector<std::string> all = flags;
    all.insert(all.end(), shipped.begin(), shipped.end());
    return all;
  }
};
