// Host memory another process shares through a file descriptor (ABI 1.3 mem_import with
// KILN_MEM_HANDLE_POSIX_FD), mapped shared, for plugins whose devices address host memory.
// Header-only, like the rest of the SDK's C++ helpers.
#pragma once

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "kiln/plugin.hpp"

namespace kiln::sdk {

class SharedFdMappings {
 public:
  struct Import {
    uint64_t address = 0;
    uint64_t bytes = 0;
  };

  SharedFdMappings() = default;
  SharedFdMappings(const SharedFdMappings&) = delete;
  SharedFdMappings& operator=(const SharedFdMappings&) = delete;
  ~SharedFdMappings() {
    for (const auto& [address, m] : mappings_) munmap(m.base, m.length);
  }

  // Maps desc's range of its descriptor; `plugin` names the plugin in errors. A handle of
  // another type is UNSUPPORTED; a descriptor that is not open, too small or not mappable
  // for reading and writing is INVALID_ARGUMENT.
  Import map(const kiln_mem_import_desc* desc, const std::string& plugin) {
    check_import_desc(desc);
    if (desc->handle_type != KILN_MEM_HANDLE_POSIX_FD)
      throw Failure(KILN_STATUS_UNSUPPORTED,
                    plugin + " imports KILN_MEM_HANDLE_POSIX_FD only, not handle type " +
                        std::to_string(desc->handle_type));
    struct stat st {};
    if (fstat(desc->fd, &st) != 0)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_import: descriptor " +
                                                      std::to_string(desc->fd) + " is not open (" +
                                                      std::strerror(errno) + ")");
    const uint64_t end = desc->offset + desc->bytes;
    if (S_ISREG(st.st_mode) && end > static_cast<uint64_t>(st.st_size))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "mem_import: descriptor " + std::to_string(desc->fd) + " holds " +
                        std::to_string(st.st_size) + " bytes; the import asks for bytes " +
                        std::to_string(desc->offset) + " to " + std::to_string(end));
    // mmap takes offsets in whole pages: map from the page holding desc->offset.
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t start = desc->offset / page * page;
    const auto length = static_cast<size_t>(end - start);
    void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, desc->fd,
                      static_cast<off_t>(start));
    if (base == MAP_FAILED)
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "mem_import: cannot map descriptor " + std::to_string(desc->fd) +
                        " for reading and writing (" + std::strerror(errno) + ")");
    const Import import{reinterpret_cast<uint64_t>(base) + (desc->offset - start), desc->bytes};
    std::lock_guard lock(mutex_);
    mappings_[import.address] = Mapping{base, length, import.bytes};
    return import;
  }

  // Unmaps the import at `address` and returns it; INVALID_ARGUMENT when there is none.
  Import unmap(uint64_t address) {
    std::lock_guard lock(mutex_);
    const auto it = mappings_.find(address);
    if (it == mappings_.end())
      throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                    "mem_release_import of an address mem_import did not return");
    const Import import{address, it->second.bytes};
    munmap(it->second.base, it->second.length);
    mappings_.erase(it);
    return import;
  }

 private:
  struct Mapping {
    void* base;
    size_t length;
    uint64_t bytes;
  };
  std::mutex mutex_;
  std::map<uint64_t, Mapping> mappings_;
};

}  // namespace kiln::sdk
