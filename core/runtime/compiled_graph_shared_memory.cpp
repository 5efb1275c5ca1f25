// A compiled graph's imports of memory other processes share (ABI 1.3), on its serving
// device, so a deployer's tensors in such memory are read and written in place.
#include "core/runtime/compiled_graph.h"
#include "core/runtime/compiled_graph_parts.h"

namespace kiln {

Result<uint64_t> CompiledGraph::import_shared(const kiln_mem_import_desc& desc) const {
  const Plugin& plugin = *parts_->plugin;
  if (!plugin.api().mem_import || !plugin.api().mem_release_import)
    return Error::user("plugin '" + plugin.name() + "' imports no shared memory (ABI " +
                       plugin.negotiated_abi().to_string() +
                       "; mem_import came with 1.3 and is optional)");
  const auto lock = plugin.exclusive();
  uint64_t address = 0;
  if (auto s =
          plugin.check(plugin.api().mem_import(plugin.instance(), parts_->device, &desc, &address),
                       "mem_import");
      !s)
    return std::move(s).error();
  return address;
}

Status CompiledGraph::release_shared(uint64_t address) const {
  const Plugin& plugin = *parts_->plugin;
  if (!plugin.api().mem_release_import)
    return Error::user("plugin '" + plugin.name() + "' imports no shared memory");
  const auto lock = plugin.exclusive();
  return plugin.check(plugin.api().mem_release_import(plugin.instance(), parts_->device, address),
                      "mem_release_import");
}

}  // namespace kiln
