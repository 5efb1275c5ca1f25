// A quick end-to-end check of one device through its plugin: allocate, upload a random
// pattern, copy on the device, download, compare, and time the copy with events when the
// plugin has them. Used by `kiln smoke`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/plugin.h"

namespace kiln {

struct SmokeStep {
  std::string name;
  bool passed = false;
  std::string detail;  // why it failed, or what it measured
};

struct SmokeReport {
  std::string plugin;
  std::string device;
  std::vector<SmokeStep> steps;
  bool passed() const;
};

// `bytes` of fresh random data (seeded by `seed`) go through the device and back.
SmokeReport smoke_test(const std::shared_ptr<const Plugin>& plugin, uint32_t device, uint64_t bytes,
                       uint64_t seed);

}  // namespace kiln
