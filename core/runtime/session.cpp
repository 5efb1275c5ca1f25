#include "core/runtime/session.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <vector>

#include "core/ops/op_registry.h"
#include "core/runtime/compile.h"
#include "core/runtime/huge_pages.h"

namespace kiln {

Result<std::unique_ptr<Session>> Session::open(Options options) {
  std::unique_ptr<Session> s(new Session());
  s->options_ = std::move(options);
  s->logging_ = std::make_unique<Logging>(s->options_.log);
  auto registry = OpRegistry::create();
  if (!registry) return std::move(registry).error();
  s->registry_ = *registry;
  const auto start = std::chrono::steady_clock::now();
  s->plugins_ = load_plugins(s->options_, *s->logging_);
  s->plugin_load_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const auto& f : s->plugins_.failures)
    s->logging_->get("runtime")->warn("plugin '{}' did not load: {}", f.name, f.error.message());
  s->cache_ = std::make_unique<DiskCache>(open_cache(s->options_, *s->logging_));
  return s;
}

Result<CompiledGraph> Session::compile(const Graph& graph) const {
  std::lock_guard<std::mutex> turn(compile_mutex_);
  // Compiling uploads parameters and tunes kernels: it takes the same turns as runs on
  // plugins that allow one caller at a time.
  std::vector<const Plugin*> all;
  for (const auto& p : plugins_.plugins) all.push_back(p.get());
  const auto calls = exclusive_calls(all);
  auto compiled = compile_with(graph, registry_, plugins_, options_, *cache_, *logging_);
  if (compiled) {
    compiled->set_plugin_load_ms(plugin_load_ms_);
    compiled->set_asynchronous(options_.run.asynchronous);
    compiled->set_staging(options_.run.staging);
    compiled->set_cuda_graphs(options_.run.cuda_graphs);
    compiled->set_huge_pages(options_.run.huge_pages ? read_huge_page_policy() : HugePagePolicy{});
  }
  return compiled;
}

}  // namespace kiln
