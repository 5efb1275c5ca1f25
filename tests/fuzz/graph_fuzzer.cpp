// libFuzzer target: any bytes as a kiln.graph/1 file. A graph that loads is decomposed and
// run on small random inputs. Nothing may crash, hang or touch memory it does not own;
// every failure must come back as an Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/graph/graph_json.h"
#include "core/graph/safetensors.h"
#include "core/interp/interpreter.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_registry.h"
#include "core/passes/decompose.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto registry = kiln::OpRegistry::create().value();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The same bytes as a safetensors file.
  std::vector<std::byte> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>(data[i]);
  (void)kiln::parse_safetensors(bytes, "fuzz");

  auto graph = kiln::parse_graph(text, "fuzz.json", registry);
  if (!graph) return 0;
  // Keep each run small: skip graphs whose values are large.
  for (const auto& v : graph->values) {
    if (v.type.numel() > 4096) return 0;
  }
  for (kiln::ValueRef p : graph->params) {
    const auto& v = graph->value(p);
    graph->param_data[v.name] = kiln::random_tensor(v.type, 1, v.random_range);
  }
  std::vector<kiln::HostTensor> inputs;
  for (size_t i = 0; i < graph->inputs.size(); ++i) {
    const auto& v = graph->value(graph->inputs[i]);
    inputs.push_back(kiln::random_tensor(v.type, i, v.random_range));
  }
  (void)kiln::interpret(*graph, inputs);
  auto primitive = kiln::decompose(*graph, registry);
  if (primitive) (void)kiln::interpret(*primitive, inputs);
  return 0;
}
