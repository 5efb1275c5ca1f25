// ABI 1.3's imports of memory another process shares, each check in its own process: a
// descriptor of shared host memory imported at an odd offset is read and written in place
// (the kit's own mapping sees the device's writes), released once, and left out of the
// memory statistics; and every bad import is refused with the right status. A plugin of an
// older minor, or one that claims no handle type the kit can make, gets SKIP with the reason.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <vector>

#include "conformance/context.h"
#include "conformance/isolated.h"
#include "conformance/on_device.h"
#include "conformance/random_bytes.h"

namespace kiln::conformance {
namespace {

constexpr uint64_t kOffset = 5000;                    // inside the second page, not aligned
constexpr uint64_t kBytes = (uint64_t{1} << 20) + 3;  // odd, over a megabyte
constexpr uint64_t kFileBytes = kOffset + kBytes + 4096;

uint64_t claimed_flags(const OnDevice& d, const Context& c) {
  uint64_t flags = 0;
  if (d.api().device_capabilities)
    d.plugin->take(d.api().device_capabilities(d.plugin->instance(), c.device, &flags));
  return flags;
}

kiln_mem_import_desc fd_desc(int fd, uint64_t offset, uint64_t bytes) {
  kiln_mem_import_desc desc{};
  desc.struct_size = sizeof desc;
  desc.handle_type = KILN_MEM_HANDLE_POSIX_FD;
  desc.fd = fd;
  desc.offset = offset;
  desc.bytes = bytes;
  return desc;
}

// A memfd of kFileBytes holding a random pattern, and the kit's own mapping of it.
struct SharedFile {
  int fd = -1;
  unsigned char* bytes = nullptr;
  ~SharedFile() {
    if (bytes) munmap(bytes, kFileBytes);
    if (fd >= 0) close(fd);
  }
};

std::string make_shared_file(SharedFile& f) {
  f.fd = memfd_create("kiln-conformance", MFD_CLOEXEC);
  if (f.fd < 0 || ftruncate(f.fd, static_cast<off_t>(kFileBytes)) != 0)
    return std::string("the kit could not make shared memory: ") + std::strerror(errno);
  void* at = mmap(nullptr, kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd, 0);
  if (at == MAP_FAILED)
    return std::string("the kit could not map its memory: ") + std::strerror(errno);
  f.bytes = static_cast<unsigned char*>(at);
  const std::vector<unsigned char> pattern = random_bytes(kFileBytes, 17);
  std::memcpy(f.bytes, pattern.data(), kFileBytes);
  return "";
}

// Why an import check cannot run on `d` (no usable device, no 1.3 import functions), if so.
std::optional<Finding> cannot_import(const OnDevice& d) {
  if (d.unusable) return d.unusable;
  if (!d.api().mem_import || !d.api().mem_release_import)
    return skip("no mem_import (ABI 1.3): imports nothing");
  return std::nullopt;
}

Finding shared_in_place(const Context& c) {
  OnDevice d = on_device(c);
  if (auto why = cannot_import(d)) return *why;
  RawPlugin& p = *d.plugin;
  const kiln_plugin_api& a = d.api();
  const uint64_t flags = claimed_flags(d, c);
  if (!(flags & KILN_CAPABILITY_IMPORT_POSIX_FD))
    return skip(flags & KILN_CAPABILITY_IMPORT_CUDA_IPC
                    ? "imports CUDA IPC handles only, which need a second process holding CUDA "
                      "memory (kiln's tests/python/test_shared_memory.py does that on a GPU)"
                    : "claims no handle type it imports");
  SharedFile file;
  if (std::string e = make_shared_file(file); !e.empty()) return skip(e);
  kiln_memory_stats before{};
  before.struct_size = sizeof before;
  p.take(a.memory_stats(p.instance(), c.device, &before));
  const kiln_mem_import_desc desc = fd_desc(file.fd, kOffset, kBytes);
  uint64_t address = 0;
  if (std::string e = p.take(a.mem_import(p.instance(), c.device, &desc, &address)); !e.empty())
    return fail("mem_import of a memfd: " + e);
  // The caller may close its descriptor once the import is made.
  close(file.fd);
  file.fd = -1;
  std::vector<unsigned char> back(kBytes, 0);
  if (std::string e = p.take(
          a.copy_device_to_host(p.instance(), c.device, nullptr, back.data(), address, kBytes));
      !e.empty())
    return fail("copy from imported memory: " + e);
  if (std::memcmp(back.data(), file.bytes + kOffset, kBytes) != 0)
    return fail("imported memory read differently from the shared bytes at the offset");
  const std::vector<unsigned char> update = random_bytes(1001, 19);
  if (std::string e = p.take(a.copy_host_to_device(p.instance(), c.device, nullptr, address + 17,
                                                   update.data(), update.size()));
      !e.empty())
    return fail("copy into imported memory: " + e);
  if (std::memcmp(file.bytes + kOffset + 17, update.data(), update.size()) != 0)
    return fail("a write to imported memory is not seen through the exporter's mapping");
  kiln_memory_stats during{};
  during.struct_size = sizeof during;
  p.take(a.memory_stats(p.instance(), c.device, &during));
  if (during.num_allocations != before.num_allocations)
    return fail("an import counts as an allocation in memory_stats");
  if (std::string e = p.take(a.mem_release_import(p.instance(), c.device, address)); !e.empty())
    return fail("mem_release_import: " + e);
  kiln_status code = KILN_OK;
  p.take(a.mem_release_import(p.instance(), c.device, address), &code);
  if (code != KILN_STATUS_INVALID_ARGUMENT)
    return fail("a second mem_release_import of one import was not INVALID_ARGUMENT");
  return pass(
      "1 MiB + 3 bytes of a memfd at offset 5000 read in place and written through (seen by "
      "the exporter), descriptor closed after import, not counted as an allocation, released "
      "once");
}

Finding import_refusals(const Context& c) {
  OnDevice d = on_device(c);
  if (auto why = cannot_import(d)) return *why;
  RawPlugin& p = *d.plugin;
  const kiln_plugin_api& a = d.api();
  const uint64_t flags = claimed_flags(d, c);
  std::string checked;
  const auto refused = [&](const kiln_mem_import_desc* desc, kiln_status want,
                           const char* what) -> std::string {
    uint64_t address = 0;
    kiln_status code = KILN_OK;
    p.take(a.mem_import(p.instance(), c.device, desc, &address), &code);
    if (code == KILN_OK) p.take(a.mem_release_import(p.instance(), c.device, address));
    if (code != want)
      return std::string(what) + ": status " + std::to_string(code) + ", expected " +
             std::to_string(want);
    checked += (checked.empty() ? "" : ", ") + std::string(what);
    return "";
  };
  SharedFile file;
  const std::string no_file = make_shared_file(file);
  std::vector<std::string> failures;
  failures.push_back(refused(nullptr, KILN_STATUS_INVALID_ARGUMENT, "no descriptor"));
  kiln_mem_import_desc unknown = fd_desc(file.fd, 0, 64);
  unknown.handle_type = 99;
  failures.push_back(refused(&unknown, KILN_STATUS_UNSUPPORTED, "an unknown handle type"));
  if ((flags & KILN_CAPABILITY_IMPORT_POSIX_FD) && !no_file.empty()) return skip(no_file);
  if (flags & KILN_CAPABILITY_IMPORT_POSIX_FD) {
    const kiln_mem_import_desc closed = fd_desc(-1, 0, 64);
    failures.push_back(refused(&closed, KILN_STATUS_INVALID_ARGUMENT, "descriptor -1"));
    const kiln_mem_import_desc past = fd_desc(file.fd, kFileBytes - 8, 64);
    failures.push_back(refused(&past, KILN_STATUS_INVALID_ARGUMENT, "a range past the end"));
    const kiln_mem_import_desc empty = fd_desc(file.fd, 0, 0);
    failures.push_back(refused(&empty, KILN_STATUS_INVALID_ARGUMENT, "0 bytes"));
  } else {
    // Not claimed: a descriptor is a handle type this device does not take.
    const kiln_mem_import_desc fd = fd_desc(file.fd, 0, 64);
    failures.push_back(refused(&fd, KILN_STATUS_UNSUPPORTED, "a descriptor (not claimed)"));
  }
  if (flags & KILN_CAPABILITY_IMPORT_CUDA_IPC) {
    unsigned char zeros[64] = {};
    kiln_mem_import_desc ipc{};
    ipc.struct_size = sizeof ipc;
    ipc.handle_type = KILN_MEM_HANDLE_CUDA_IPC;
    ipc.handle = zeros;
    ipc.handle_size = sizeof zeros;
    ipc.bytes = 64;
    failures.push_back(refused(&ipc, KILN_STATUS_INVALID_ARGUMENT, "a CUDA IPC handle of zeros"));
    ipc.handle_size = 10;
    failures.push_back(refused(&ipc, KILN_STATUS_INVALID_ARGUMENT, "a 10-byte CUDA IPC handle"));
  }
  kiln_status code = KILN_OK;
  p.take(a.mem_release_import(p.instance(), c.device, 4096), &code);
  if (code != KILN_STATUS_INVALID_ARGUMENT)
    failures.push_back("mem_release_import of an address never imported: status " +
                       std::to_string(code));
  for (const std::string& f : failures)
    if (!f.empty()) return fail(f);
  return pass("refused: " + checked + ", and a release of an address never imported");
}

}  // namespace

void check_imports(const Context& c, Report& report) {
  const std::vector<std::pair<const char*, Finding (*)(const Context&)>> checks = {
      {"shared memory imported in place", shared_in_place},
      {"bad imports refused", import_refusals}};
  for (const auto& [name, check] : checks)
    report.add("memory import", name, run_isolated([&] { return check(c); }, c.timeout_seconds));
}

}  // namespace kiln::conformance
