// Kernels' error words: one int32 per kernel in host memory the device writes, set when a
// kernel meets an index out of range or an integer division by zero. A GPU plugin reads them
// once the device has finished (or, set, at the next launch) and names the kernel.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace kiln::gpu {

// What a nonzero error word says.
std::string error_word_text(int32_t status);

// The first set word among `kernels` (a map from name to something with a `slot`), cleared so
// it is reported once: "kernel NAME: what"; "" when none is set.
template <class Kernels>
std::string take_error_word(const Kernels& kernels, volatile int32_t* words) {
  for (const auto& [name, k] : kernels) {
    const int32_t status = words[k.slot];
    if (status == 0) continue;
    words[k.slot] = 0;
    return "kernel " + name + ": " + error_word_text(status);
  }
  return "";
}

// Without a wait: the first set word among the executables in `pending` that ran on `device`
// (cleared), "" for none. Runs that returned without waiting report their errors at the
// device's next launch this way, as soon as a word is set.
template <class Executable>
std::string take_pending_error_word(const std::set<Executable*>& pending, uint32_t device) {
  for (Executable* exe : pending) {
    if (exe->device != device) continue;
    if (std::string f = take_error_word(exe->kernels, exe->status_host); !f.empty()) return f;
  }
  return "";
}

// After a wait for `device`: clears the words of every executable in `pending` that ran there
// (each with `device`, `kernels` and `status_host`), drops them from `pending`, and returns the
// first failure ("" for none).
template <class Executable>
std::string drain_error_words(std::set<Executable*>& pending, uint32_t device) {
  std::string failure;
  for (auto it = pending.begin(); it != pending.end();) {
    Executable* exe = *it;
    if (exe->device != device) {
      ++it;
      continue;
    }
    for (std::string f = take_error_word(exe->kernels, exe->status_host); !f.empty();
         f = take_error_word(exe->kernels, exe->status_host))
      if (failure.empty()) failure = std::move(f);
    it = pending.erase(it);
  }
  return failure;
}

}  // namespace kiln::gpu
