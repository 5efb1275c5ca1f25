#include "core/graph/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

namespace kiln {
namespace {

using nlohmann::json;

struct SafetensorsDType {
  const char* name;
  DType dtype;
};

constexpr SafetensorsDType kDTypes[] = {
    {"BOOL", DType::Bool}, {"I8", DType::I8},   {"U8", DType::U8},   {"I16", DType::I16},
    {"I32", DType::I32},   {"I64", DType::I64}, {"F16", DType::F16}, {"BF16", DType::BF16},
    {"F32", DType::F32},   {"F64", DType::F64},
};

const char* safetensors_name(DType d) {
  for (const auto& e : kDTypes) {
    if (e.dtype == d) return e.name;
  }
  return "?";
}

constexpr uint64_t kMaxHeader = 100u << 20;  // the format's own limit

}  // namespace

Result<std::map<std::string, HostTensor>> parse_safetensors(const std::vector<std::byte>& bytes,
                                                            const std::string& source) {
  auto fail = [&](const std::string& why) { return Error::user(source + ": " + why); };
  if (bytes.size() < 8)
    return fail("too short for a safetensors file (" + std::to_string(bytes.size()) + " bytes)");
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i)
    header_size = (header_size << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
  if (header_size > kMaxHeader)
    return fail("header length " + std::to_string(header_size) + " exceeds the 100 MiB limit");
  if (header_size > bytes.size() - 8) {
    return fail("header length " + std::to_string(header_size) + " runs past the end of the " +
                std::to_string(bytes.size()) + "-byte file (truncated?)");
  }
  const auto* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  json header = json::parse(header_begin, header_begin + header_size, nullptr, false);
  if (header.is_discarded()) return fail("the header is not valid JSON");
  if (!header.is_object()) return fail("the header is not a JSON object");
  const uint64_t data_size = bytes.size() - 8 - header_size;
  const std::byte* data = bytes.data() + 8 + header_size;
  std::map<std::string, HostTensor> tensors;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& item : header.items()) {
    const std::string& name = item.key();  // named, not a structured binding: lambdas capture it
    const json& entry = item.value();
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& why) { return fail("tensor '" + name + "': " + why); };
    if (!entry.is_object()) return bad("entry is not an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string())
      return bad("missing or non-string 'dtype'");
    const std::string dtype_text = entry["dtype"];
    const auto* known = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                     [&](const auto& e) { return dtype_text == e.name; });
    if (known == std::end(kDTypes)) return bad("unsupported dtype '" + dtype_text + "'");
    if (!entry.contains("shape") || !entry["shape"].is_array())
      return bad("missing or non-list 'shape'");
    Shape shape;
    uint64_t numel = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned()) return bad("shape entries must be non-negative integers");
      const uint64_t size = d.get<uint64_t>();
      if (size > 0 && numel > std::numeric_limits<uint64_t>::max() / 16 / size)
        return bad("shape is too large");
      numel *= size;
      shape.push_back(static_cast<int64_t>(size));
    }
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2 || !entry["data_offsets"][0].is_number_unsigned() ||
        !entry["data_offsets"][1].is_number_unsigned()) {
      return bad("'data_offsets' must be two non-negative integers");
    }
    const uint64_t begin = entry["data_offsets"][0], end = entry["data_offsets"][1];
    if (begin > end || end > data_size) {
      return bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] lie outside the " + std::to_string(data_size) + " data bytes");
    }
    const uint64_t expected = numel * static_cast<uint64_t>(dtype_size(known->dtype));
    if (end - begin != expected) {
      return bad(std::to_string(end - begin) + " bytes for " + dtype_text + shape_text(shape) +
                 ", which needs " + std::to_string(expected));
    }
    ranges.emplace_back(begin, end);
    std::vector<std::byte> payload(data + begin, data + end);
    auto tensor = HostTensor::from_bytes(known->dtype, shape, std::move(payload));
    if (!tensor) return bad(tensor.error().message());
    tensors.emplace(name, std::move(*tensor));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) return fail("two tensors' data ranges overlap");
  }
  return tensors;
}

Result<std::map<std::string, HostTensor>> read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::user("cannot read safetensors file '" + path + "'");
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error::user("error while reading '" + path + "'");
  std::vector<std::byte> bytes(raw.size());
  std::memcpy(bytes.data(), raw.data(), raw.size());
  return parse_safetensors(bytes, path);
}

std::vector<std::byte> serialize_safetensors(
    const std::vector<std::pair<std::string, HostTensor>>& tensors) {
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    const uint64_t size = static_cast<uint64_t>(tensor.numel() * dtype_size(tensor.dtype()));
    header[name] = {{"dtype", safetensors_name(tensor.dtype())},
                    {"shape", tensor.sizes()},
                    {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
  std::vector<std::byte> bytes(8 + text.size());
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<size_t>(i)] = static_cast<std::byte>((text.size() >> (8 * i)) & 0xff);
  std::memcpy(bytes.data() + 8, text.data(), text.size());
  for (const auto& entry : tensors) {
    const HostTensor contiguous = entry.second.contiguous();
    const auto data = contiguous.bytes();
    bytes.insert(bytes.end(), data.begin(), data.end());
  }
  return bytes;
}

Status write_safetensors(const std::string& path,
                         const std::vector<std::pair<std::string, HostTensor>>& tensors) {
  const std::vector<std::byte> bytes = serialize_safetensors(tensors);
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return Error::user("cannot write '" + temp + "'");
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) return Error::user("error while writing '" + temp + "'");
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) return Error::user("cannot move '" + temp + "' to '" + path + "': " + ec.message());
  return Ok{};
}

}  // namespace kiln
