// The runtime C API (sdk/include/kiln/runtime.h) over kiln::Session and CompiledGraph. Every
// entry point catches what the core throws (out of memory, a bug) and returns it as an error.
#include <kiln/runtime.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "capi/dlpack_tensor.h"
#include "core/config/config_loader.h"
#include "core/config/environment.h"
#include "core/graph/graph_json.h"
#include "core/graph/safetensors.h"
#include "core/ops/op_def.h"
#include "core/passes/complex_lowering.h"
#include "core/runtime/session.h"

struct kiln_runtime_error {
  kiln_runtime_code code;
  std::string message;
};

struct kiln_session {
  std::unique_ptr<kiln::Session> session;
};

struct kiln_graph {
  kiln::CompiledGraph compiled;
  std::string target;
  DLDevice device{kDLCPU, 0};
  struct Info {
    std::string name;
    kiln::TensorType type;
  };
  std::vector<Info> inputs, outputs;
  std::string stats_json;
};

namespace {

kiln_runtime_error* failure(const kiln::Error& e) {
  return new (std::nothrow) kiln_runtime_error{
      e.is_user() ? KILN_RUNTIME_USER_ERROR : KILN_RUNTIME_INTERNAL_ERROR, e.to_string()};
}

kiln_runtime_error* user_failure(const std::string& message) {
  return failure(kiln::Error::user(message));
}

// Runs `body` (returning kiln::Status) with every exception turned into an error.
template <class F>
kiln_runtime_error* guarded(const char* function, F body) {
  try {
    kiln::Status s = body();
    return s ? nullptr : failure(s.error());
  } catch (const std::bad_alloc&) {
    return user_failure(std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return failure(kiln::Error::internal(std::string(function) + ": " + e.what()));
  } catch (...) {
    return failure(kiln::Error::internal(std::string(function) + ": unknown exception"));
  }
}

DLDevice dl_device(const kiln::CompiledGraph& g, const std::string& kind, uint32_t index) {
  if (kind == "cpu" || g.host_memory()) return {kDLCPU, 0};
  if (kind == "cuda") return {kDLCUDA, static_cast<int32_t>(index)};
  if (kind == "rocm" || kind == "amdgpu") return {kDLROCM, static_cast<int32_t>(index)};
  return {kDLExtDev, static_cast<int32_t>(index)};
}

kiln::Result<std::vector<kiln::TensorRef>> refs(const DLTensor* const* tensors, size_t count,
                                                DLDevice device, const char* what) {
  std::vector<kiln::TensorRef> out;
  if (count > 0 && tensors == nullptr) return kiln::Error::user(std::string(what) + " is NULL");
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (tensors[i] == nullptr)
      return kiln::Error::user(std::string(what) + " " + std::to_string(i) + " is NULL");
    auto r = kiln::capi::tensor_ref(*tensors[i], device, what, i);
    if (!r) return std::move(r).error();
    out.push_back(std::move(*r));
  }
  return out;
}

// A host tensor the runtime allocated, handed out as a DLPack managed tensor.
struct OwnedOutput {
  kiln_dl_managed_tensor managed{};
  std::vector<std::byte> bytes;
  std::vector<int64_t> shape;
};

void delete_owned(kiln_dl_managed_tensor* self) {
  if (self) delete static_cast<OwnedOutput*>(self->manager_ctx);
}

}  // namespace

extern "C" {

void kiln_runtime_version(uint32_t* major, uint32_t* minor) {
  if (major) *major = KILN_RUNTIME_API_MAJOR;
  if (minor) *minor = KILN_RUNTIME_API_MINOR;
}

kiln_runtime_code kiln_runtime_error_code(const kiln_runtime_error* error) {
  return error ? error->code : KILN_RUNTIME_INTERNAL_ERROR;
}

const char* kiln_runtime_error_message(const kiln_runtime_error* error) {
  return error ? error->message.c_str() : "out of memory making an error";
}

void kiln_runtime_error_destroy(kiln_runtime_error* error) {
  delete error;
}

kiln_runtime_error* kiln_session_open(const kiln_session_options* options, kiln_session** out) {
  return guarded("kiln_session_open", [&]() -> kiln::Status {
    if (out == nullptr) return kiln::Error::user("kiln_session_open: out is NULL");
    *out = nullptr;
    const kiln::Environment env = kiln::Environment::from_process();
    const char* text = options ? options->config_text : nullptr;
    const char* path = options ? options->config_path : nullptr;
    auto loaded =
        text ? kiln::parse_options(text, "<config text>", std::filesystem::current_path().string(),
                                   env)
             : kiln::load_options(
                   path ? std::optional<std::string>(path) : std::optional<std::string>(), env);
    if (!loaded) return std::move(loaded).error();
    // 1.0 callers' struct ends before `deterministic`.
    const size_t has_deterministic =
        offsetof(kiln_session_options, deterministic) + sizeof(options->deterministic);
    if (options && options->struct_size >= has_deterministic && options->deterministic) {
      loaded->schedule.deterministic = true;
      loaded->autotune.deterministic = true;
    }
    // 1.3 callers' struct ends before the TF32 choices.
    const size_t has_tf32 = offsetof(kiln_session_options, matmul_tf32) + sizeof(int32_t);
    if (options && options->struct_size >= has_tf32) {
      for (auto [choice, name, field] :
           {std::tuple{options->conv_tf32, "conv_tf32", &loaded->schedule.conv_tf32},
            std::tuple{options->matmul_tf32, "matmul_tf32", &loaded->schedule.matmul_tf32}}) {
        if (choice < -1 || choice > 1)
          return kiln::Error::user(std::string("kiln_session_open: ") + name +
                                   " is 0 (the config's), 1 or -1, got " + std::to_string(choice));
        if (choice != 0) *field = choice > 0;
      }
    }
    auto session = kiln::Session::open(std::move(*loaded));
    if (!session) return std::move(session).error();
    *out = new kiln_session{std::move(*session)};
    return kiln::Ok{};
  });
}

void kiln_session_close(kiln_session* session) {
  delete session;
}

kiln_runtime_error* kiln_graph_compile(kiln_session* session, const kiln_graph_source* source,
                                       kiln_graph** out) {
  return guarded("kiln_graph_compile", [&]() -> kiln::Status {
    if (out == nullptr || session == nullptr || source == nullptr)
      return kiln::Error::user("kiln_graph_compile: session, source and out must not be NULL");
    *out = nullptr;
    const kiln::Session& s = *session->session;
    auto graph =
        source->graph_text
            ? kiln::parse_graph(std::string_view(source->graph_text, source->graph_text_size),
                                "<graph text>", s.registry())
        : source->graph_path ? kiln::load_graph(source->graph_path, s.registry())
                             : kiln::Result<kiln::Graph>(kiln::Error::user(
                                   "kiln_graph_compile: neither graph_text nor graph_path given"));
    if (!graph) return std::move(graph).error();
    if (source->weights || source->weights_path) {
      const std::string where = source->weights ? "<weights bytes>" : source->weights_path;
      auto weights =
          source->weights
              ? kiln::parse_safetensors(
                    std::vector<std::byte>(
                        static_cast<const std::byte*>(source->weights),
                        static_cast<const std::byte*>(source->weights) + source->weights_size),
                    where)
              : kiln::read_safetensors(source->weights_path);
      if (!weights) return std::move(weights).error();
      if (auto a = kiln::attach_weights(*graph, *weights, where); !a) return a;
    }
    graph = kiln::lower_complex(*graph);
    if (!graph) return std::move(graph).error();
    auto compiled = s.compile(*graph);
    if (!compiled) return std::move(compiled).error();
    auto g = std::make_unique<kiln_graph>(kiln_graph{std::move(*compiled), {}, {}, {}, {}, {}});
    const kiln::CompileStats& st = g->compiled.stats();
    g->target = st.target;
    for (const auto& p : s.plugins().plugins)
      for (const kiln::DeviceInfo& d : p->devices())
        if (st.target == p->name() + ":" + std::to_string(d.index))
          g->device = dl_device(g->compiled, d.kind, d.index);
    const kiln::Graph& dg = g->compiled.graph();
    for (kiln::ValueRef r : dg.inputs) g->inputs.push_back({dg.value(r).name, dg.type(r)});
    for (kiln::ValueRef r : dg.outputs) g->outputs.push_back({dg.value(r).name, dg.type(r)});
    std::vector<std::string> host_ops;
    for (const kiln::PlanStep& step : g->compiled.plan())
      if (step.kind == kiln::PlanStep::Kind::Host) {
        const kiln::Node& n = g->compiled.graph().nodes.at(static_cast<size_t>(step.node));
        host_ops.push_back(n.name + " (" + n.op->name + ")");
      }
    nlohmann::json stats{{"kernels", st.kernels},
                         {"library_calls", st.externs},
                         {"host_steps", st.host_steps},
                         {"host_ops", host_ops},
                         {"from_cache", st.graph_cache_hit && st.units_cached == st.units},
                         {"deterministic", s.options().schedule.deterministic},
                         {"conv_tf32", s.options().schedule.conv_tf32},
                         {"matmul_tf32", s.options().schedule.matmul_tf32},
                         {"compile_ms", st.compile_ms}};
    g->stats_json = stats.dump();
    *out = g.release();
    return kiln::Ok{};
  });
}

void kiln_graph_destroy(kiln_graph* graph) {
  delete graph;
}

DLDevice kiln_graph_device(const kiln_graph* graph) {
  return graph ? graph->device : DLDevice{kDLCPU, 0};
}

const char* kiln_graph_target(const kiln_graph* graph) {
  return graph ? graph->target.c_str() : "";
}

int kiln_graph_from_cache(const kiln_graph* graph) {
  if (!graph) return 0;
  const kiln::CompileStats& st = graph->compiled.stats();
  return st.graph_cache_hit && st.units_cached == st.units ? 1 : 0;
}

const char* kiln_graph_stats_json(const kiln_graph* graph) {
  return graph ? graph->stats_json.c_str() : "{}";
}

size_t kiln_graph_num_inputs(const kiln_graph* graph) {
  return graph ? graph->inputs.size() : 0;
}

size_t kiln_graph_num_outputs(const kiln_graph* graph) {
  return graph ? graph->outputs.size() : 0;
}

kiln_runtime_error* kiln_graph_tensor_info(const kiln_graph* graph, int is_output, size_t index,
                                           kiln_tensor_info* out) {
  return guarded("kiln_graph_tensor_info", [&]() -> kiln::Status {
    if (graph == nullptr || out == nullptr)
      return kiln::Error::user("kiln_graph_tensor_info: graph and out must not be NULL");
    const auto& list = is_output ? graph->outputs : graph->inputs;
    if (index >= list.size())
      return kiln::Error::user("kiln_graph_tensor_info: the graph has " +
                               std::to_string(list.size()) + (is_output ? " outputs" : " inputs") +
                               ", not " + std::to_string(index + 1));
    const auto& info = list[index];
    if (out->struct_size < sizeof(kiln_tensor_info))
      return kiln::Error::user("kiln_graph_tensor_info: struct_size is too small");
    out->name = info.name.c_str();
    out->dtype = kiln::capi::to_dl_dtype(info.type.dtype);
    out->ndim = static_cast<int32_t>(info.type.sizes.size());
    out->shape = info.type.sizes.data();
    return kiln::Ok{};
  });
}

kiln_runtime_error* kiln_graph_run(kiln_graph* graph, const DLTensor* const* inputs,
                                   size_t num_inputs, const DLTensor* const* outputs,
                                   size_t num_outputs) {
  return guarded("kiln_graph_run", [&]() -> kiln::Status {
    if (graph == nullptr) return kiln::Error::user("kiln_graph_run: graph is NULL");
    auto in = refs(inputs, num_inputs, graph->device, "input");
    if (!in) return std::move(in).error();
    auto out = refs(outputs, num_outputs, graph->device, "output");
    if (!out) return std::move(out).error();
    return graph->compiled.run_into(*in, *out);
  });
}

kiln_runtime_error* kiln_graph_import_memory(kiln_graph* graph, const kiln_shared_memory* shared,
                                             void** data) {
  return guarded("kiln_graph_import_memory", [&]() -> kiln::Status {
    if (graph == nullptr || shared == nullptr || data == nullptr)
      return kiln::Error::user("kiln_graph_import_memory: graph, shared and data must be set");
    if (shared->struct_size < sizeof(kiln_shared_memory))
      return kiln::Error::user("kiln_graph_import_memory: shared->struct_size is " +
                               std::to_string(shared->struct_size) + ", not a kiln_shared_memory");
    kiln_mem_import_desc desc{};
    desc.struct_size = sizeof desc;
    desc.handle_type = shared->type;
    desc.fd = shared->fd;
    desc.handle = shared->handle;
    desc.handle_size = shared->handle_size;
    desc.offset = shared->offset;
    desc.bytes = shared->bytes;
    auto address = graph->compiled.import_shared(desc);
    if (!address) return std::move(address).error();
    *data = reinterpret_cast<void*>(static_cast<uintptr_t>(*address));
    return kiln::Ok{};
  });
}

kiln_runtime_error* kiln_graph_release_memory(kiln_graph* graph, void* data) {
  return guarded("kiln_graph_release_memory", [&]() -> kiln::Status {
    if (graph == nullptr) return kiln::Error::user("kiln_graph_release_memory: graph is NULL");
    return graph->compiled.release_shared(reinterpret_cast<uintptr_t>(data));
  });
}

void kiln_graph_set_random_seed(kiln_graph* graph, uint64_t seed) {
  if (graph) graph->compiled.set_random_seed(seed);
}

uint64_t kiln_graph_last_run_copied_bytes(const kiln_graph* graph) {
  return graph ? static_cast<uint64_t>(graph->compiled.last_run_copied_bytes()) : 0;
}

kiln_runtime_error* kiln_graph_run_alloc(kiln_graph* graph, const DLTensor* const* inputs,
                                         size_t num_inputs, kiln_dl_managed_tensor** outputs,
                                         size_t num_outputs) {
  return guarded("kiln_graph_run_alloc", [&]() -> kiln::Status {
    if (graph == nullptr || (num_outputs > 0 && outputs == nullptr))
      return kiln::Error::user("kiln_graph_run_alloc: graph and outputs must not be NULL");
    if (num_outputs != graph->outputs.size())
      return kiln::Error::user("kiln_graph_run_alloc: the graph has " +
                               std::to_string(graph->outputs.size()) + " outputs, not " +
                               std::to_string(num_outputs));
    for (size_t i = 0; i < num_outputs; ++i) outputs[i] = nullptr;
    auto in = refs(inputs, num_inputs, graph->device, "input");
    if (!in) return std::move(in).error();
    std::vector<std::unique_ptr<OwnedOutput>> owned;
    std::vector<kiln::TensorRef> out;
    for (const auto& info : graph->outputs) {
      auto o = std::make_unique<OwnedOutput>();
      o->bytes.resize(static_cast<size_t>(info.type.numel() * kiln::dtype_size(info.type.dtype)));
      o->shape = info.type.sizes;
      out.push_back(kiln::TensorRef{
          o->bytes.data(), kiln::TensorType::contiguous(info.type.dtype, info.type.sizes), false});
      DLTensor& t = o->managed.dl_tensor;
      t.data = o->bytes.data();
      t.device = {kDLCPU, 0};
      t.ndim = static_cast<int32_t>(o->shape.size());
      t.dtype = kiln::capi::to_dl_dtype(info.type.dtype);
      t.shape = o->shape.data();
      t.strides = nullptr;
      t.byte_offset = 0;
      o->managed.version.major = 1;
      o->managed.version.minor = 0;
      o->managed.manager_ctx = o.get();
      o->managed.deleter = delete_owned;
      owned.push_back(std::move(o));
    }
    if (auto s = graph->compiled.run_into(*in, out); !s) return s;
    for (size_t i = 0; i < num_outputs; ++i) outputs[i] = &owned[i].release()->managed;
    return kiln::Ok{};
  });
}

}  // extern "C"
