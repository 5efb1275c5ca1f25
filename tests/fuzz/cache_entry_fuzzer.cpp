// libFuzzer target: any bytes as the payload of a compiled-graph cache entry (what the disk
// cache hands the decoder once a checksum matches). The decoder must return an error or a
// program that plans: nothing may crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/ops/op_registry.h"
#include "core/runtime/compiled_graph_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto registry = kiln::OpRegistry::create().value();
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  (void)kiln::decode_compiled_graph(payload, registry);
  return 0;
}
