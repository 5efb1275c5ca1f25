// Which devices hold each buffer's current bytes while a placed plan runs in order: inputs,
// parameters and random state start on the serving device (0); a write leaves the bytes only
// on the writer's device; a copy adds the device copied to.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "core/lower/loop_ir.h"

namespace kiln {

class BufferResidence {
 public:
  explicit BufferResidence(const LoopProgram& program);

  // The device to copy `buffer` from before a step on `at` touches it, or none when `at`
  // holds its current bytes or nothing has written it yet. Writes need the copy too: kernels
  // may write parts of one buffer (a concatenation) on two devices.
  std::optional<int> copy_source(int buffer, int at) const;
  void copied(int buffer, int at) { where_.at(static_cast<size_t>(buffer)).insert(at); }
  void written(int buffer, int at) { where_.at(static_cast<size_t>(buffer)) = {at}; }

 private:
  std::vector<std::set<int>> where_;
};

}  // namespace kiln
