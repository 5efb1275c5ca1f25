#include "core/runtime/buffer_residence.h"

namespace kiln {

BufferResidence::BufferResidence(const LoopProgram& program) : where_(program.buffers.size()) {
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const BufferKind kind = program.buffers[b].kind;
    if (kind == BufferKind::Input || kind == BufferKind::Param || kind == BufferKind::RandomState)
      where_[b] = {0};
  }
}

std::optional<int> BufferResidence::copy_source(int buffer, int at) const {
  const std::set<int>& where = where_.at(static_cast<size_t>(buffer));
  if (where.empty() || where.contains(at)) return std::nullopt;
  return where.contains(0) ? 0 : *where.begin();
}

}  // namespace kiln
