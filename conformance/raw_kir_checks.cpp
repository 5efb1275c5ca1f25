#include "conformance/raw_kir_checks.h"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "conformance/on_device.h"

namespace kiln::conformance {
namespace {

uint32_t thread_safety(RawPlugin& p) {
  kiln_plugin_attributes a{};
  a.struct_size = sizeof a;
  p.take(p.table()->get_attributes(p.instance(), &a));
  return a.thread_safety;
}

// Runs kernel `name` of `exe` on n values (x = 0, 1, ...) `times` times with buffers of its
// own and reads y back; "" when y = x + add everywhere, else what went wrong.
std::string run_loaded(RawPlugin& p, uint32_t device, kiln_executable* exe, const std::string& name,
                       int64_t n, int add, int times) {
  const kiln_plugin_api& a = *p.table();
  const auto bytes = static_cast<uint64_t>(n) * 4;
  uint64_t buffers[2] = {0, 0};
  std::string failure;
  for (uint64_t& b : buffers)
    if (failure.empty()) failure = p.take(a.mem_alloc(p.instance(), device, bytes, 64, &b));
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n), -1.0f);
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  if (failure.empty())
    failure =
        p.take(a.copy_host_to_device(p.instance(), device, nullptr, buffers[0], x.data(), bytes));
  kiln_launch_args args{};
  args.struct_size = sizeof args;
  args.kernel = name.c_str();
  args.buffers = buffers;
  args.num_buffers = 2;
  for (int t = 0; t < times && failure.empty(); ++t) failure = p.take(a.launch(exe, &args));
  if (failure.empty())
    failure =
        p.take(a.copy_device_to_host(p.instance(), device, nullptr, y.data(), buffers[1], bytes));
  for (int64_t i = 0; i < n && failure.empty(); ++i)
    if (y[static_cast<size_t>(i)] != x[static_cast<size_t>(i)] + static_cast<float>(add))
      failure = "element " + std::to_string(i) + " is " + std::to_string(y[static_cast<size_t>(i)]);
  for (uint64_t b : buffers)
    if (b) p.take(a.mem_free(p.instance(), device, b));
  return failure;
}

// Loads `artifact`, runs it as run_loaded does once, and destroys it.
std::string run_add(RawPlugin& p, uint32_t device, const std::string& artifact,
                    const std::string& name, int64_t n, int add) {
  kiln_executable* exe = nullptr;
  if (std::string e =
          p.take(p.table()->load(p.instance(), device, artifact.data(), artifact.size(), &exe));
      !e.empty())
    return "load: " + e;
  const std::string failure = run_loaded(p, device, exe, name, n, add, 1);
  p.table()->executable_destroy(exe);
  return failure;
}

}  // namespace

std::string add_kernel(const std::string& name, int64_t n, int add) {
  const std::string size = std::to_string(n);
  return "kir/1\nkernel " + name + " pointwise\n  buffer in0 f32 " + size +
         " in\n  buffer out0 f32 " + size + " out\n  ranges " + size +
         "\n  %0 = load f32 in0[x0]\n  %1 = const f32 " + std::to_string(add) +
         "\n  %2 = add f32 %0, %1\n  store out0[x0] %2\nend\n";
}

std::string compile(RawPlugin& p, uint32_t device, const std::string& kir, std::string& error) {
  kiln_compile_args args{};
  args.struct_size = sizeof args;
  args.device = device;
  args.kir_text = kir.data();
  args.kir_size = kir.size();
  args.config = "";
  kiln_blob* artifact = nullptr;
  kiln_blob* metadata = nullptr;
  error = p.take(p.table()->compile(p.instance(), &args, &artifact, &metadata));
  p.take(metadata);
  return p.take(artifact);
}

std::vector<std::string> kit_graphs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

Finding bad_kir(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  if (!d.api().compile) return fail("a plugin with devices has no compile");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"text that is not KIR", "hello, plugin"},
      {"a kernel cut off", "kir/1\nkernel k0 pointwise\n  buffer in0 f32 10 in\n"},
      {"a load from a buffer it does not declare",
       "kir/1\nkernel k0 pointwise\n  buffer out0 f32 4 out\n  ranges 4\n"
       "  %0 = load f32 nowhere[x0]\n  store out0[x0] %0\nend\n"}};
  std::string seen;
  for (const auto& [what, text] : cases) {
    std::string error;
    const std::string artifact = compile(p, c.device, text, error);
    if (error.empty()) return fail(what + " compiled");
    seen += (seen.empty() ? "" : "; ") + what + ": " + error.substr(0, 120);
  }
  return pass(seen);
}

Finding concurrent_compiles(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  if (!(thread_safety(p) & KILN_THREAD_SAFE_COMPILE))
    return skip("not claimed: kiln compiles for this plugin from one thread at a time");
  constexpr int kThreads = 4;
  std::vector<std::string> artifacts(kThreads), errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      artifacts[static_cast<size_t>(t)] =
          compile(p, c.device, add_kernel("k" + std::to_string(t) + "_add", 1000 + t, t + 1),
                  errors[static_cast<size_t>(t)]);
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    if (!errors[static_cast<size_t>(t)].empty())
      return fail("compile on thread " + std::to_string(t) + ": " + errors[static_cast<size_t>(t)]);
    if (std::string e = run_add(p, c.device, artifacts[static_cast<size_t>(t)],
                                "k" + std::to_string(t) + "_add", 1000 + t, t + 1);
        !e.empty())
      return fail("the kernel compiled on thread " + std::to_string(t) + ": " + e);
  }
  return pass(std::to_string(kThreads) + " kernels compiled at once, each then ran right");
}

Finding concurrent_launches(const Context& c) {
  OnDevice d = on_device(c);
  if (d.unusable) return *d.unusable;
  RawPlugin& p = *d.plugin;
  if (!(thread_safety(p) & KILN_THREAD_SAFE_LAUNCH))
    return skip("not claimed: kiln launches on this plugin from one thread at a time");
  std::string error;
  const std::string artifact = compile(p, c.device, add_kernel("k0_add", 4096, 3), error);
  if (!error.empty()) return fail("compile: " + error);
  // The claim covers launches and memory calls: the executable is loaded before the threads
  // start and destroyed after they end.
  kiln_executable* exe = nullptr;
  if (std::string e =
          p.take(d.api().load(p.instance(), c.device, artifact.data(), artifact.size(), &exe));
      !e.empty())
    return fail("load: " + e);
  constexpr int kThreads = 4;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      failures[static_cast<size_t>(t)] = run_loaded(p, c.device, exe, "k0_add", 4096, 3, 20);
    });
  for (auto& t : threads) t.join();
  d.api().executable_destroy(exe);
  for (int t = 0; t < kThreads; ++t)
    if (!failures[static_cast<size_t>(t)].empty())
      return fail("thread " + std::to_string(t) + ": " + failures[static_cast<size_t>(t)]);
  return pass(std::to_string(kThreads) + " threads, each launching 20 times on buffers of its own");
}

}  // namespace kiln::conformance
