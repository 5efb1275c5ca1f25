// The code half of the interpreter's table. Compiling checks that every kernel can be
// interpreted and keeps the KIR text as the artifact; loading prepares each kernel; a launch
// checks its buffers against the plugin's memory and runs the kernel before it returns.
#include <map>
#include <memory>

#include "plugin_state.h"
#include "run_kernel.h"

struct kiln_executable {
  kiln_plugin* plugin;
  std::map<std::string, kiln::interp::Program> kernels;
};

namespace kiln::interp {

namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

std::vector<kir::Kernel> parse_or_throw(const char* text, size_t size, kiln_status code) {
  if (text == nullptr) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "no KIR text");
  kir::ParseResult parsed = kir::parse(std::string_view(text, size));
  if (!parsed.error.empty()) throw Failure(code, "bad KIR: " + parsed.error);
  return std::move(parsed.kernels);
}

Program prepare_or_throw(const kir::Kernel& k) {
  try {
    return prepare(k);
  } catch (const std::invalid_argument& e) {
    throw Failure(KILN_STATUS_COMPILE_ERROR, e.what());
  }
}

const char* op_kind_name(kir::OpKind kind) {
  switch (kind) {
    case kir::OpKind::Load:
      return "load";
    case kir::OpKind::Store:
      return "store";
    case kir::OpKind::Scatter:
      return "scatter";
    case kir::OpKind::Scan:
      return "scan";
    case kir::OpKind::Reduce:
      return "reduce";
    case kir::OpKind::CheckIndex:
      return "check_index";
    default:
      return "";
  }
}

// Why the plugin's options decline `k` ("" when they do not).
std::string declined_because(const kiln_plugin& p, const kir::Kernel& k) {
  const char* const tail = ", which this plugin's `decline` option declines";
  if (p.declined.contains(k.kind)) return "kernel " + k.name + " is a " + k.kind + " kernel" + tail;
  for (const kir::Op& op : k.body)
    if (p.declined.contains(op_kind_name(op.kind)))
      return std::string("kernel ") + k.name + " has a " + op_kind_name(op.kind) + tail;
  return "";
}

// What `supports` declines is neither compiled nor loaded.
void refuse_declined(const kiln_plugin& p, const kir::Kernel& k) {
  if (const std::string why = declined_because(p, k); !why.empty())
    throw Failure(KILN_STATUS_UNSUPPORTED, why);
}

kiln_error* supports(kiln_plugin* p, uint32_t device, const char* text, size_t size, int* supported,
                     kiln_blob** reason) {
  return guard([&] {
    if (device != 0)
      throw Failure(KILN_STATUS_NOT_FOUND, "device " + std::to_string(device) + " does not exist");
    *supported = 1;
    std::string why;
    for (const kir::Kernel& k : parse_or_throw(text, size, KILN_STATUS_INVALID_ARGUMENT)) {
      why = declined_because(*p, k);
      if (!why.empty()) break;
      try {
        prepare(k);
      } catch (const std::invalid_argument& e) {
        why = e.what();
        break;
      }
    }
    if (why.empty()) return;
    *supported = 0;
    if (reason != nullptr) *reason = kiln::sdk::make_blob(why);
  });
}

kiln_error* compile(kiln_plugin* p, const kiln_compile_args* args_in, kiln_blob** artifact,
                    kiln_blob** metadata) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    std::string names;
    for (const kir::Kernel& k :
         parse_or_throw(args.kir_text, args.kir_size, KILN_STATUS_COMPILE_ERROR)) {
      refuse_declined(*p, k);
      prepare_or_throw(k);
      names += (names.empty() ? "" : ", ") + kiln::sdk::json_string(k.name);
    }
    *artifact = kiln::sdk::make_blob(std::string(args.kir_text, args.kir_size));
    if (metadata != nullptr)
      *metadata = kiln::sdk::make_blob("{\"format\": \"kir-text\", \"kernels\": [" + names + "]}");
  });
}

kiln_error* load(kiln_plugin* p, uint32_t device, const void* artifact, size_t size,
                 kiln_executable** out) {
  return guard([&] {
    if (device != 0)
      throw Failure(KILN_STATUS_NOT_FOUND, "device " + std::to_string(device) + " does not exist");
    auto exe = std::make_unique<kiln_executable>();
    exe->plugin = p;
    // An artifact comes from a cache on disk: a damaged one is refused here by the parser.
    for (const kir::Kernel& k :
         parse_or_throw(static_cast<const char*>(artifact), size, KILN_STATUS_INVALID_ARGUMENT)) {
      refuse_declined(*p, k);
      exe->kernels.emplace(k.name, prepare_or_throw(k));
    }
    *out = exe.release();
  });
}

std::string fault_message(const KernelFault& f, const std::string& kernel) {
  switch (f.code) {
    case KernelFault::IndexOutOfRange:
      return "kernel " + kernel + ": index " + std::to_string(f.value) +
             " is out of range for a dimension of size " + std::to_string(f.bound);
    case KernelFault::DivisionByZero:
      return "kernel " + kernel + ": integer division by zero";
    case KernelFault::NegativePower:
      return "kernel " + kernel + ": integers to negative integer powers are not allowed";
    case KernelFault::None:
      break;
  }
  return "";
}

kiln_error* launch(kiln_executable* exe, const kiln_launch_args* args_in) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const std::string name = args.kernel ? args.kernel : "";
    auto it = exe->kernels.find(name);
    if (it == exe->kernels.end())
      throw Failure(KILN_STATUS_NOT_FOUND, "no kernel '" + name + "' in this executable");
    const Program& program = it->second;
    if (args.num_buffers != program.buffers.size() || (args.num_buffers > 0 && !args.buffers))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "kernel " + name + " takes " + std::to_string(program.buffers.size()) +
                        " buffers, got " + std::to_string(args.num_buffers));
    std::vector<std::byte*> buffers;
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      const kir::Buffer& buf = program.buffers[b];
      const auto size = static_cast<uint64_t>(kir::dtype_size(buf.dtype));
      if (buf.elements < 0 || static_cast<uint64_t>(buf.elements) > UINT64_MAX / size)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                      "kernel " + name + ": buffer " + buf.name + " is too large");
      const uint64_t bytes = static_cast<uint64_t>(buf.elements) * size;
      if (bytes > 0 && !exe->plugin->memory.contains(args.buffers[b], bytes))
        throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                      "kernel " + name + ": buffer " + buf.name + " is not " +
                          std::to_string(bytes) + " bytes inside one allocation of this plugin");
      buffers.push_back(reinterpret_cast<std::byte*>(args.buffers[b]));
    }
    auto run = [&program, buffers, name] {
      KernelFault fault;
      try {
        fault = run_kernel(program, buffers);
      } catch (const std::out_of_range& e) {
        throw Failure(KILN_STATUS_INTERNAL, e.what());
      }
      if (fault.code != KernelFault::None)
        throw Failure(KILN_STATUS_INVALID_ARGUMENT, fault_message(fault, name));
    };
    // Deferred streams: the kernel runs when the host waits for its stream (its error then).
    kiln::interp::submit(*exe->plugin, args.stream, run);
  });
}

}  // namespace

void add_code_functions(kiln_plugin_api& api) {
  api.supports = supports;
  api.compile = compile;
  api.load = load;
  api.executable_destroy = [](kiln_executable* e) { delete e; };
  api.launch = launch;
  api.extern_names = [](kiln_plugin*, kiln_blob** names) {
    return guard([&] { *names = kiln::sdk::make_blob(""); });
  };
}

}  // namespace kiln::interp
