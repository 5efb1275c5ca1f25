// A compiled graph's plan recorded once and replayed as one launch (RunConfig::cuda_graphs,
// ABI 1.4 capture): the host's cost of a call then no longer grows with its kernels. A
// recording names every address it launches on, so it serves only runs whose caller memory
// sits where it sat: a set of addresses is recorded after a plain run on it succeeded (so
// nothing is allocated while recording), and a caller whose tensors move at every call gets
// plain runs, not a recording per call.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/runtime/plugin.h"

namespace kiln {

struct ReplayStats {
  int64_t captures = 0;           // recordings made
  int64_t replays = 0;            // runs that were one replay
  int64_t failed_recordings = 0;  // recordings the device failed (each run plainly instead)
  std::string not_recordable;     // why the plan is never recorded (host steps...), or ""
  std::string refused;            // the device's last failure to record, or ""
};

class Replays {
 public:
  // Whether `device` records work (KILN_CAPABILITY_CAPTURE and the 1.4 functions).
  static bool possible(const Plugin& plugin, uint32_t device);
  Replays(const Plugin& plugin, uint32_t device);
  ~Replays();
  Replays(const Replays&) = delete;
  Replays& operator=(const Replays&) = delete;

  // Runs the plan for caller addresses `key` as one replay where it can (recording it first
  // when a plain run on `key` succeeded before); `issue(stream)` issues the plan's work on
  // `stream` while it records. False: the caller runs the plan itself.
  Result<bool> run(const std::vector<uint64_t>& key,
                   const std::function<Status(kiln_stream*)>& issue);
  // A plain run on `key` succeeded: every buffer it needs exists, so it can be recorded.
  void ran_plainly(const std::vector<uint64_t>& key);
  const ReplayStats& stats() const { return stats_; }

 private:
  struct Recording {
    std::vector<uint64_t> key;
    kiln_graph* graph = nullptr;
  };
  Status record(const std::vector<uint64_t>& key, const std::function<Status(kiln_stream*)>& issue);
  Status replay(kiln_graph* graph);

  const Plugin& plugin_;
  const uint32_t device_;
  kiln_stream* stream_ = nullptr;           // the one recordings are made on
  std::deque<Recording> recordings_;        // most recently used first
  std::deque<std::vector<uint64_t>> seen_;  // address sets seen once, newest first
  ReplayStats stats_;
  bool stopped_ = false;  // the device failed to record this plan again: plain runs only
};

}  // namespace kiln
