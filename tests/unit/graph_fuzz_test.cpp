// The random-graph differential fuzzer: KILN_FUZZ_GRAPHS random graphs (default 1000) from
// the op registry's schemas, compiled by the plugin under test fused and unfused and compared
// with the reference interpreter on poisoned outputs. Graphs are compiled in batches (one
// compiler run covers many); a failing batch is split to find the graph that fails, which is
// written, cut down to its failing outputs, to $KILN_FUZZ_OUT (default: the working
// directory) as fuzz-<seed>.json. KILN_FUZZ_SEED replays a run (default: a fixed seed);
// scripts/fuzz-graphs.sh N runs longer on fresh seeds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <string>

#include "core/graph/graph_json_writer.h"
#include "core/ops/op_registry.h"
#include "tests/unit/differential.h"
#include "tests/unit/random_graph.h"

namespace kiln::test {
namespace {

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : fallback;
}

// The suite's run is reproducible (the same graphs and inputs on every machine, so a
// difference between machines is a finding, not noise); KILN_FUZZ_SEED=random draws fresh
// ones, as scripts/fuzz-graphs.sh does.
uint64_t base_seed() {
  const char* v = std::getenv("KILN_FUZZ_SEED");
  if (!v || !*v) return 20261124;
  if (std::string(v) != "random") return std::strtoull(v, nullptr, 10);
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32 | rd()) & 0xffffffffffffull;
}

int failures_so_far() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
}

class GraphFuzz : public Differential {
 protected:
  RandomSubgraph add(GraphBuilder& b, uint64_t seed) {
    RandomSubgraph g = add_random_subgraph(b, seed, "g" + std::to_string(seed) + "_");
    for (const auto& [name, range] : g.input_ranges) set_input_range(name, range);
    return g;
  }

  // Checks graph `seed` alone with the batch's inputs; writes it when it fails.
  void isolate(uint64_t seed, uint64_t input_seed) {
    GraphBuilder b = builder();
    const RandomSubgraph g = add(b, seed);
    auto graph = b.finish();
    ASSERT_TRUE(graph) << graph.error().to_string();
    const int before = failures_so_far();
    check(loaded(*graph), input_seed);  // the file below holds the graph as drawn
    if (failures_so_far() == before) return;
    const char* dir = std::getenv("KILN_FUZZ_OUT");
    const std::string path =
        std::string(dir && *dir ? dir : ".") + "/fuzz-" + std::to_string(seed) + ".json";
    std::ofstream(path) << write_graph_json(*graph, g.outputs);
    ADD_FAILURE() << "fuzz graph " << seed << " fails (KILN_FUZZ_SEED=" << seed
                  << " KILN_FUZZ_GRAPHS=1 KILN_TEST_SEED=" << input_seed << "); written to "
                  << path;
  }
};

TEST_F(GraphFuzz, RandomGraphsMatchTheReference) {
  const int64_t graphs = env_int("KILN_FUZZ_GRAPHS", 1000);
  const int64_t batch = env_int("KILN_FUZZ_BATCH", 100);
  const uint64_t base = base_seed();
  std::cout << "fuzz: KILN_FUZZ_SEED=" << base << ", " << graphs << " graphs\n";
  std::set<std::string> ops;
  int64_t nodes = 0, empty = 0;
  for (int64_t start = 0; start < graphs; start += batch) {
    GraphBuilder b = builder();
    const int64_t end = std::min(graphs, start + batch);
    for (int64_t i = start; i < end; ++i) {
      const RandomSubgraph g = add(b, base + static_cast<uint64_t>(i));
      nodes += static_cast<int64_t>(g.ops.size());
      empty += g.outputs.empty() ? 1 : 0;
      ops.insert(g.ops.begin(), g.ops.end());
    }
    const Graph graph = finish(b);
    if (graph.outputs.empty()) continue;
    const int before = failures_so_far();
    const uint64_t input_seed = base * 31 + static_cast<uint64_t>(start);
    check(graph, input_seed);
    if (failures_so_far() == before) continue;
    for (int64_t i = start; i < end; ++i) isolate(base + static_cast<uint64_t>(i), input_seed);
  }
  const size_t available = fuzzable_ops(*OpRegistry::create().value()).size();
  std::cout << "fuzz: " << graphs << " graphs (" << empty << " without ops), " << nodes
            << " nodes, " << ops.size() << " of " << available << " fuzzable ops drawn\n";
  EXPECT_LT(empty, graphs / 10 + 1) << "the generator should rarely fail to draw an op";
}

}  // namespace
}  // namespace kiln::test
