#include "core/runtime/debug_dump.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace kiln {

bool DebugDump::write(const std::string& stage, const std::string& text) const {
  if (dir_.empty()) return true;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  std::ofstream out(std::filesystem::path(dir_) / (graph_ + "." + stage), std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::string generated_code(const std::string& compile_metadata) {
  const auto j = nlohmann::json::parse(compile_metadata, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("source") || !j["source"].is_string())
    return "";
  return j["source"].get<std::string>();
}

}  // namespace kiln
