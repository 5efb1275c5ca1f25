#include "code_functions.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>

#include "codegen.h"
#include "compiler.h"
#include "extern_matmul.h"
#include "kiln/kir.hpp"
#include "kiln_cpu_runtime_text.h"
#include "loaded_module.h"
#include "plugins/kir_support/conv_call.h"
#include "plugins/kir_support/parse_args.h"
#include "precompiled_header.h"
#include "tuning_space.h"

struct kiln_executable {
  kiln_plugin* plugin = nullptr;
  std::unique_ptr<kiln::cpu::LoadedModule> module;
};

// What kernels see as krt::Status (runtime/kiln_cpu_runtime.h); the layouts must agree.
namespace krt {
struct Status {
  int code;
  int64_t value;
  int64_t bound;
};
}  // namespace krt

namespace kiln::cpu {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

// Bumped whenever generated code changes for the same KIR.
constexpr const char* kCodegenVersion = "cpp-codegen-2";

CodegenOptions codegen_options(const kiln_plugin& plugin) {
  CodegenOptions o;
  o.threads = static_cast<int>(plugin.threads);
  o.vector_width = plugin.vector_width;
  if (plugin.cpu.l2_bytes >= 256 * 1024)
    o.row_cache_bytes =
        std::min<int64_t>(256 * 1024, static_cast<int64_t>(plugin.cpu.l2_bytes) / 4);
  return o;
}

// oneDNN, opened once (under the plugin's onednn_mutex, which the caller holds).
OnednnLibrary& conv_library(kiln_plugin& plugin) {
  if (plugin.onednn_tried) return plugin.onednn;
  plugin.onednn_tried = true;
  std::string why;
  plugin.onednn = OnednnLibrary::open(plugin.onednn_option, why);
  if (plugin.onednn.available())
    plugin.log(KILN_LOG_INFO, "cpu: 2-d convolutions through " + plugin.onednn.path());
  else
    plugin.log(KILN_LOG_INFO,
               "cpu: no oneDNN (" + why + "); convolutions become generated kernels");
  return plugin.onednn;
}

// The precompiled runtime header's directory for `lanes`, looked up once per lane count
// (under header_mutex).
std::filesystem::path header_dir(kiln_plugin& plugin, int lanes) {
  std::lock_guard lock(plugin.header_mutex);
  if (auto found = plugin.header_dirs.find(lanes); found != plugin.header_dirs.end())
    return found->second;
  std::filesystem::path& dir = plugin.header_dirs[lanes];
  if (plugin.header_cache.empty()) return dir;
  std::string why;
  dir = precompiled_header_dir(plugin.header_cache, {plugin.compiler, plugin.all_flags(), {}},
                               plugin.compiler_version, lanes, why);
  if (dir.empty())
    plugin.log(KILN_LOG_INFO, "cpu: kernels compile without a precompiled header: " + why);
  else
    plugin.log(KILN_LOG_DEBUG, "cpu: precompiled header in " + dir.string());
  return dir;
}

bool known_extern(kiln_plugin& plugin, const std::string& name) {
  if (name == "mm" || name == "bmm") return true;
  if (!kir_support::conv_direction(name)) return false;
  std::lock_guard lock(plugin.onednn_mutex);
  for (const std::string& line : conv_library(plugin).extern_lines())
    if (line.rfind(name + " ", 0) == 0) return true;
  return false;
}

kiln_error* supports(kiln_plugin* plugin, uint32_t, const char* text, size_t size, int* supported,
                     kiln_blob** reason) {
  return guard([&] {
    *supported = 0;
    if (reason) *reason = nullptr;
    try {
      const auto kernels = kir_support::parse_kir_argument(text, size);
      for (const auto& k : kernels) {
        if (k.kind == "extern" && !known_extern(*plugin, k.extern_name))
          throw std::runtime_error("no extern '" + k.extern_name + "'");
      }
      generate_source(kernels, codegen_options(*plugin));
      *supported = 1;
    } catch (const std::exception& e) {
      if (reason) *reason = kiln::sdk::make_blob(e.what());
    }
  });
}

kiln_error* tuning_space(kiln_plugin* plugin, uint32_t, const char* text, size_t size,
                         kiln_blob** space) {
  return guard([&] {
    std::string lines;
    const auto kernels = kir_support::parse_kir_argument(text, size);
    // One kernel is tuned at a time; a batch gets the default alone.
    if (kernels.size() == 1 && kernels[0].kind != "extern") {
      lines = tuning_space_text(kernels[0], codegen_options(*plugin),
                                static_cast<int>(plugin->cpu.simd_width_f32));
    } else {
      lines = tuning_line(codegen_options(*plugin)) + "\n";
    }
    *space = kiln::sdk::make_blob(std::move(lines));
  });
}

kiln_error* compile(kiln_plugin* plugin, const kiln_compile_args* args_in, kiln_blob** artifact,
                    kiln_blob** metadata) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const auto kernels = kir_support::parse_kir_argument(args.kir_text, args.kir_size);
    CodegenOptions options;
    try {
      options = apply_tuning(args.config ? args.config : "", codegen_options(*plugin),
                             static_cast<int>(plugin->cpu.logical_cores));
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
    std::string source;
    try {
      source = generate_source(kernels, options);
    } catch (const std::exception& e) {
      throw Failure(KILN_STATUS_UNIMPLEMENTED, e.what());
    }
    const auto start = std::chrono::steady_clock::now();
    std::string bytes;
    try {
      bytes = compile_shared_object(source, {plugin->compiler, plugin->all_flags(),
                                             header_dir(*plugin, options.vector_width)});
    } catch (const CompilerMissing& e) {
      throw Failure(KILN_STATUS_NOT_FOUND, e.what());
    } catch (const CompilerUnusable& e) {
      throw Failure(KILN_STATUS_COMPILE_ERROR, e.what());
    } catch (const std::exception& e) {
      throw Failure(KILN_STATUS_INTERNAL, e.what());
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    plugin->log(KILN_LOG_DEBUG, "compiled " + std::to_string(kernels.size()) + " kernels in " +
                                    std::to_string(static_cast<int>(ms)) + " ms");
    *artifact = kiln::sdk::make_blob(std::move(bytes));
    if (metadata) {
      *metadata = kiln::sdk::make_blob("{\"kernels\": " + std::to_string(kernels.size()) +
                                       ", \"compile_ms\": " + std::to_string(ms) +
                                       ", \"source\": " + kiln::sdk::json_string(source) + "}");
    }
  });
}

kiln_error* load(kiln_plugin* plugin, uint32_t device, const void* artifact, size_t size,
                 kiln_executable** out) {
  return guard([&] {
    if (device != 0)
      throw Failure(KILN_STATUS_NOT_FOUND, "device " + std::to_string(device) + " does not exist");
    auto exe = std::make_unique<kiln_executable>();
    exe->plugin = plugin;
    try {
      exe->module = std::make_unique<LoadedModule>(artifact, size);
    } catch (const std::exception& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
    *out = exe.release();
  });
}

std::vector<void*> checked_buffers(const kiln_plugin& plugin, const kiln_launch_args& args,
                                   const std::vector<int64_t>& bytes, const std::string& what) {
  if (args.num_buffers != bytes.size()) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, what + " takes " + std::to_string(bytes.size()) +
                                                    " buffers, got " +
                                                    std::to_string(args.num_buffers));
  }
  std::vector<void*> pointers;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const uint64_t address = args.buffers[i];
    if (bytes[i] > 0 && !plugin.memory.contains(address, static_cast<uint64_t>(bytes[i]))) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    what + ": buffer " + std::to_string(i) + " is not " + std::to_string(bytes[i]) +
                        " bytes inside one allocation of this plugin");
    }
    pointers.push_back(reinterpret_cast<void*>(address));
  }
  return pointers;
}

std::string status_message(const krt::Status& s, const std::string& kernel) {
  switch (s.code) {
    case 1:
      return "kernel " + kernel + ": index " + std::to_string(s.value) +
             " is out of range for a dimension of size " + std::to_string(s.bound);
    case 2:
      return "kernel " + kernel + ": integer division by zero";
    case 3:
      return "kernel " + kernel + ": integers to negative integer powers are not allowed";
    default:
      return "kernel " + kernel + ": error code " + std::to_string(s.code);
  }
}

kiln_error* launch(kiln_executable* exe, const kiln_launch_args* args_in) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const std::string name = args.kernel ? args.kernel : "";
    const LoadedModule::Kernel* k = nullptr;
    try {
      k = &exe->module->kernel(name);
    } catch (const std::exception& e) {
      throw Failure(KILN_STATUS_NOT_FOUND, e.what());
    }
    const std::vector<void*> buffers =
        checked_buffers(*exe->plugin, args, k->buffer_bytes, "kernel " + name);
    krt::Status status{0, 0, 0};
    k->fn(buffers.data(), &status);
    if (status.code != 0) throw Failure(KILN_STATUS_INVALID_ARGUMENT, status_message(status, name));
  });
}

void conv_call(kiln_plugin& plugin, const kiln_launch_args& args,
               kir_support::ConvDirection direction, const std::string& name) {
  const kir_support::ConvCall call = kir_support::read_conv_call(args);
  const std::vector<void*> buffers =
      checked_buffers(plugin, args, call.buffer_bytes(direction), name);
  // Open (extern_call checked known_extern); its calls are safe from several threads.
  plugin.onednn.run(direction, call, buffers[0], buffers[1], buffers[2]);
}

kiln_error* extern_call(kiln_plugin* plugin, uint32_t device, const kiln_launch_args* args_in) {
  return guard([&] {
    if (device != 0)
      throw Failure(KILN_STATUS_NOT_FOUND, "device " + std::to_string(device) + " does not exist");
    const auto args = kiln::sdk::read_struct(args_in);
    const std::string name = args.kernel ? args.kernel : "";
    if (!known_extern(*plugin, name))
      throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
    try {
      if (const auto direction = kir_support::conv_direction(name))
        return conv_call(*plugin, args, *direction, name);
      const kir_support::MatmulCall call = kir_support::read_matmul_call(args);
      matmul(checked_buffers(*plugin, args, call.buffer_bytes(), name), call);
    } catch (const std::invalid_argument& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": " + e.what());
    } catch (const std::runtime_error& e) {
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, e.what());
    }
  });
}

}  // namespace

std::string compiler_fingerprint(const kiln_plugin& plugin) {
  std::string f = std::string(kCodegenVersion) + "@" + kiln::sdk::plugin_binary_digest() + "; " +
                  plugin.compiler_version + ";";
  for (const auto& flag : plugin.all_flags()) f += " " + flag;
  for (const auto& flag : required_flags()) f += " " + flag;
  f += "; threads=" + std::to_string(plugin.threads);
  f += "; vector_width=" + std::to_string(plugin.vector_width);
  f += "; row_cache=" + std::to_string(codegen_options(plugin).row_cache_bytes);
  f += "; runtime=" + std::to_string(std::hash<std::string>{}(kiln_cpu_runtime_text));
  return f;
}

void add_code_functions(kiln_plugin_api& api) {
  api.supports = supports;
  api.compile = compile;
  api.tuning_space = tuning_space;
  api.load = load;
  api.executable_destroy = [](kiln_executable* e) { delete e; };
  api.launch = launch;
  api.extern_names = [](kiln_plugin* plugin, kiln_blob** names) {
    return guard([&] {
      std::string text = "mm\nbmm\n";
      std::lock_guard lock(plugin->onednn_mutex);
      for (const std::string& line : conv_library(*plugin).extern_lines()) text += line + "\n";
      *names = kiln::sdk::make_blob(std::move(text));
    });
  };
  api.extern_call = extern_call;
}

}  // namespace kiln::cpu
