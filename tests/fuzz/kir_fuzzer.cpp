// libFuzzer target: any bytes as kir/1 text through the SDK's reader, the one every C++ plugin
// uses. Nothing may crash or hang, and what parses must print to text that parses again to
// the same text (the canonical form round-trips).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sdk/include/kiln/kir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const kiln::kir::ParseResult parsed = kiln::kir::parse(text);
  if (!parsed.ok()) return 0;
  const std::string printed = kiln::kir::print(parsed.kernels);
  const kiln::kir::ParseResult again = kiln::kir::parse(printed);
  if (!again.ok() || kiln::kir::print(again.kernels) != printed) __builtin_trap();
  return 0;
}
