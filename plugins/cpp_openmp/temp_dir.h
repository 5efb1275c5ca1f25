// A private directory under the system temp dir, removed with everything in it when the
// object goes away, and whole-file reads and writes for what the compiler reads and makes.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::cpu {

class TempDir {
 public:
  // Under `parent` when given (so that a rename into a sibling stays on one file system).
  explicit TempDir(const std::filesystem::path& parent = {});
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Gives up ownership: the directory stays when this goes away.
  void keep() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::string& text);
std::string read_file(const std::filesystem::path& path);

}  // namespace kiln::cpu
