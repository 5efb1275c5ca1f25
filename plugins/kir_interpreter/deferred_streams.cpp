#include "deferred_streams.h"

namespace kiln::interp {

DeferredStreams::Queue* DeferredStreams::find(kiln_stream* s) {
  auto it = queues_.find(s);
  return it == queues_.end() ? nullptr : &it->second;
}

void DeferredStreams::add(kiln_stream* s) {
  std::lock_guard lock(mutex_);
  queues_[s];
}

void DeferredStreams::remove(kiln_stream* s) {
  std::lock_guard lock(mutex_);
  try {
    run_all(s);
  } catch (...) {
    // stream_destroy reports nothing: a host that wanted the error waited first.
  }
  queues_.erase(s);
}

void DeferredStreams::queue(kiln_stream* s, std::function<void()> work, bool copy) {
  std::lock_guard lock(mutex_);
  Queue* q = s ? find(s) : nullptr;
  if (!q || (eager_copies_ && copy && q->work.empty())) {
    if (q) {
      ++q->queued;
      ++q->done;
    }
    work();
    return;
  }
  q->work.push_back(std::move(work));
  ++q->queued;
}

uint64_t DeferredStreams::end(kiln_stream* s) {
  std::lock_guard lock(mutex_);
  Queue* q = s ? find(s) : nullptr;
  return q ? q->queued : 0;
}

bool DeferredStreams::reached(kiln_stream* s, uint64_t position) {
  std::lock_guard lock(mutex_);
  Queue* q = s ? find(s) : nullptr;
  return !q || q->done >= position;
}

bool DeferredStreams::step_towards(kiln_stream* s, uint64_t position) {
  std::lock_guard lock(mutex_);
  Queue* q = s ? find(s) : nullptr;
  if (!q || q->done >= position) return true;
  // Taken off the queue before it runs: the work may drain other queues, or throw.
  std::function<void()> work = std::move(q->work.front());
  q->work.pop_front();
  ++q->done;
  work();
  return q->done >= position;
}

void DeferredStreams::run_until(kiln_stream* s, uint64_t position) {
  while (!step_towards(s, position)) {
  }
}

void DeferredStreams::run_all(kiln_stream* s) {
  run_until(s, end(s));
}

}  // namespace kiln::interp
