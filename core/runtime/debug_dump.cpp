#include "core/runtime/debug_dump.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace kiln {

std::string DebugDump::file_stem(const std::string& graph_name) {
  std::string stem;
  for (const char c : graph_name.substr(0, 200)) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    stem += safe ? c : '_';
  }
  return stem.empty() ? "graph" : stem;
}

std::string DebugDump::path(const std::string& stage) const {
  return (std::filesystem::path(dir_) / (graph_ + "." + stage)).string();
}

bool DebugDump::write(const std::string& stage, const std::string& text) const {
  if (dir_.empty()) return true;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  std::ofstream out(path(stage), std::ios::binary);
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
