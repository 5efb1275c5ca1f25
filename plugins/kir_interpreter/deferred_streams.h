// Streams that hold their work until the host waits (option `streams: deferred`): what a GPU
// may do, taken to its limit. Work given a stream is queued and runs only when a wait needs it
// (stream_synchronize, event_synchronize, or another stream's queued stream_wait_event), so a
// host that reads memory before ordering its copies and kernels with events reads stale
// bytes, and its tests fail. Work on the default stream (NULL) runs at once. With
// `streams: deferred_kernels` a copy with nothing queued ahead of it on its stream runs at
// once, as a copy engine would while the kernels wait: a copy the host forgot to make wait
// for a kernel then reads what the kernel has not written yet.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

struct kiln_stream;

namespace kiln::interp {

// Only streams add()ed are deferred: work on any other (or NULL) runs at once, and every
// wait on it has passed, which is what immediate streams are.
class DeferredStreams {
 public:
  explicit DeferredStreams(bool eager_copies) : eager_copies_(eager_copies) {}
  void add(kiln_stream* s);
  // Runs the stream's queue first: nothing queued is lost.
  void remove(kiln_stream* s);
  // `work` on `s` (not added: runs now); a copy with nothing ahead runs now under eager copies.
  void queue(kiln_stream* s, std::function<void()> work, bool copy = false);
  // Whether `s`'s work up to `position` has run.
  bool reached(kiln_stream* s, uint64_t position);
  // Where `s`'s queue ends now: an event recorded there.
  uint64_t end(kiln_stream* s);
  // Runs `s`'s queued work up to `position` (a stream no longer alive has run all of it).
  void run_until(kiln_stream* s, uint64_t position);
  void run_all(kiln_stream* s);
  // Runs one item of `s` when it has not reached `position`; whether it has now.
  bool step_towards(kiln_stream* s, uint64_t position);

 private:
  struct Queue {
    std::deque<std::function<void()>> work;
    uint64_t queued = 0;
    uint64_t done = 0;
  };
  Queue* find(kiln_stream* s);
  const bool eager_copies_;
  // Recursive: a queued wait runs another stream's work from inside a drain.
  std::recursive_mutex mutex_;
  std::map<kiln_stream*, Queue> queues_;  // the streams alive
};

}  // namespace kiln::interp
