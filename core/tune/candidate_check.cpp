#include "core/tune/candidate_check.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "core/interp/compare.h"

namespace kiln {

Result<std::vector<HostTensor>> launch_outputs(const Plugin& plugin, kiln_executable* exe,
                                               const kir::Kernel& k,
                                               const std::vector<DeviceBuffer>& buffers,
                                               const std::vector<HostTensor>& inputs) {
  std::vector<uint64_t> addresses;
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    const kir::Buffer& buffer = k.buffers[b];
    const auto bytes = static_cast<size_t>(buffer.elements * kir::dtype_size(buffer.dtype));
    if (bytes > 0) {
      std::vector<std::byte> poison(bytes, std::byte{0xff});
      const std::span<const std::byte> data =
          buffer.role == kir::Role::Out ? std::span<const std::byte>(poison) : inputs[b].bytes();
      if (auto s = buffers[b].upload_at(0, data); !s) return std::move(s).error();
    }
    addresses.push_back(buffers[b].address());
  }
  kiln_launch_args args{
      sizeof(args), k.name.c_str(), addresses.data(), addresses.size(), nullptr, 0, nullptr};
  if (auto s = plugin.check(plugin.api().launch(exe, &args), "launch of " + k.name); !s)
    return std::move(s).error();
  std::vector<HostTensor> outputs;
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    const kir::Buffer& buffer = k.buffers[b];
    if (buffer.role == kir::Role::In) continue;
    std::vector<std::byte> bytes(
        static_cast<size_t>(buffer.elements * kir::dtype_size(buffer.dtype)));
    if (auto s = buffers[b].download_at(0, bytes); !s) return std::move(s).error();
    auto t = HostTensor::from_bytes(static_cast<DType>(buffer.dtype), {buffer.elements},
                                    std::move(bytes));
    if (!t) return std::move(t).error();
    outputs.push_back(std::move(*t));
  }
  return outputs;
}

std::vector<HostTensor> magnitudes_of(const std::vector<HostTensor>& inputs) {
  std::vector<HostTensor> out;
  for (const HostTensor& t : inputs) {
    if (t.numel() == 0 || !is_floating(t.dtype())) {
      out.push_back(t);
      continue;
    }
    HostTensor m = t.to(t.dtype());
    for (int64_t i = 0; i < m.numel(); ++i) m.set(i, std::fabs(m.get(i)));
    out.push_back(std::move(m));
  }
  return out;
}

std::string output_mismatch(const kir::Kernel& k, const std::vector<HostTensor>& actual,
                            const std::vector<HostTensor>& expected,
                            const std::vector<HostTensor>& magnitude, bool exact) {
  int64_t terms = 1;
  for (int64_t r : k.reduction_ranges) terms *= std::max<int64_t>(r, 1);
  size_t o = 0;
  for (const kir::Buffer& buffer : k.buffers) {
    if (buffer.role == kir::Role::In) continue;
    const HostTensor& a = actual.at(o);
    const HostTensor& e = expected.at(o);
    if (exact) {
      const auto ab = a.bytes(), eb = e.bytes();
      if (ab.size() != eb.size() || std::memcmp(ab.data(), eb.data(), ab.size()) != 0)
        return buffer.name + " differs from the default config's bits";
    } else {
      const Comparison c =
          compare(a, e, tolerance_for(e.dtype()),
                  ReductionBound{o < magnitude.size() ? &magnitude[o] : nullptr, terms});
      if (!c.ok()) {
        return fmt::format("{}[{}] is {} where the default config gives {}", buffer.name,
                           c.first_mismatch, a.get(c.first_mismatch), e.get(c.first_mismatch));
      }
    }
    ++o;
  }
  return "";
}

}  // namespace kiln
