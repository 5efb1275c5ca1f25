#include "core/lower/loop_ir.h"

#include <algorithm>

namespace kiln {
namespace {

void add_once(std::vector<int>& list, int buffer) {
  if (std::find(list.begin(), list.end(), buffer) == list.end()) list.push_back(buffer);
}

}  // namespace

std::vector<int> kernel_reads(const LoopKernel& k) {
  std::vector<int> reads;
  for (int b : k.extern_inputs) add_once(reads, b);
  for (const LoopOp& op : k.body)
    if (op.kind == LoopOpKind::Load) add_once(reads, op.buffer);
  return reads;
}

std::vector<int> kernel_writes(const LoopKernel& k) {
  std::vector<int> writes;
  for (int b : k.extern_outputs) add_once(writes, b);
  for (const LoopOp& op : k.body)
    if (op.kind == LoopOpKind::Store) add_once(writes, op.buffer);
  return writes;
}

}  // namespace kiln
