// A run's inputs and outputs through page-locked host buffers (RunConfig::staging, ABI 1.2),
// overlapped with its kernels where the plugin orders streams with events: each input copied
// on an upload stream with an event of its own, each kernel on a compute stream waiting only
// for the inputs it reads, each output copied back on a download stream as soon as the last
// kernel touching it is queued, while later kernels run. Without events, every copy is
// waited for at once and kernels run on the default stream.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "core/runtime/plugin.h"

namespace kiln {

class StagedCopies {
 public:
  // Whether `device` of `plugin` can stage copies: asynchronous copies, page-locked memory
  // and the functions they need.
  static bool possible(const Plugin& plugin, uint32_t device);
  StagedCopies(const Plugin& plugin, uint32_t device);
  ~StagedCopies();  // waits for pending copies before freeing what they use
  StagedCopies(const StagedCopies&) = delete;
  StagedCopies& operator=(const StagedCopies&) = delete;

  // A new run's uploads: they follow the kernels so far (an earlier run's may still read the
  // input buffers). With `overlap`, this run's kernels go on the compute stream, each after
  // the uploads it reads; else the uploads are waited for at end_uploads and kernels go on
  // the default stream (timed runs: the device timer marks the default stream).
  Status begin_uploads(bool overlap);
  // `bytes` into buffer `b` at `address`, through `b`'s page-locked buffer.
  Status upload(int b, uint64_t address, std::span<const std::byte> bytes);
  // Without overlap: waits for every upload now.
  Status end_uploads();
  // Before a kernel reading `buffers`: the compute stream waits for their pending uploads.
  Status before_kernel(std::span<const int> buffers);
  // The stream kernels go on (NULL: the device's default stream).
  kiln_stream* compute_stream() const { return overlap_run_ ? compute_ : nullptr; }
  // Buffer `b`'s `bytes` at `address` to its page-locked buffer, after the kernels so far.
  Status download(int b, uint64_t address, size_t bytes);
  bool downloading(int b) const { return downloads_.count(b) != 0; }
  // Waits for the downloads; then downloaded() holds their bytes until the next run.
  Status wait_downloads();
  std::span<const std::byte> downloaded(int b) const;
  // Waits for every stream: before work the host orders by returning (copies without a
  // stream, host steps).
  Status settle();

 private:
  struct Pinned {
    void* host = nullptr;
    size_t bytes = 0;
  };
  Result<std::byte*> pinned(std::map<int, Pinned>& pool, int b, size_t bytes);
  Status make_stream(kiln_stream** stream);
  Result<kiln_event*> event(int key);
  // `waiter` waits for the work queued on `stream` so far.
  Status follow(kiln_stream* waiter, kiln_stream* stream, int key);
  Status synchronize(kiln_stream* stream, const char* what);

  const Plugin& plugin_;
  const uint32_t device_;
  const bool events_work_;    // the plugin orders streams with events
  bool overlap_run_ = false;  // this run's kernels on the compute stream
  kiln_stream* upload_ = nullptr;
  kiln_stream* compute_ = nullptr;
  kiln_stream* download_ = nullptr;
  std::map<int, Pinned> upload_pinned_;
  std::map<int, Pinned> download_pinned_;
  std::map<int, kiln_event*> events_;   // per input buffer; negative keys: markers
  std::map<int, bool> upload_pending_;  // input buffer -> not yet waited for by kernels
  std::map<int, size_t> downloads_;     // output buffer -> bytes, this run
  bool uploads_queued_ = false;         // page-locked sources maybe still read
};

}  // namespace kiln
