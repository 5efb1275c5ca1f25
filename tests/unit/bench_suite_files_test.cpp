// The suites shipped in bench/suites: each loads, and every graph, model and config file it
// names exists, so a renamed file fails here rather than in a benchmarker's run.
#include <gtest/gtest.h>

#include <filesystem>

#include "bench/suite/suite.h"
#include "tests/unit/test_paths.h"

namespace kiln::bench {
namespace {

TEST(BenchSuiteFiles, EveryShippedSuiteLoadsAndNamesFilesThatExist) {
  const std::filesystem::path dir = test::data_dir() + "/bench/suites";
  int suites = 0;
  bool references = false, models = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++suites;
    auto suite = load_suite(entry.path().string());
    ASSERT_TRUE(suite) << suite.error().to_string();
    for (const SuiteGraph& g : suite->graphs) {
      for (const std::string& file : {g.file, g.weights, g.model})
        EXPECT_TRUE(file.empty() || std::filesystem::exists(file)) << entry.path() << ": " << file;
      models = models || !g.model.empty();
    }
    for (const SuiteTarget& t : suite->targets) {
      EXPECT_TRUE(t.config_file.empty() || std::filesystem::exists(t.config_file))
          << entry.path() << ": " << t.config_file;
      references = references || !t.torch.empty();
    }
  }
  EXPECT_GE(suites, 6);
  EXPECT_TRUE(references) << "no shipped suite has PyTorch reference rows";
  EXPECT_TRUE(models) << "no shipped suite has models";
}

}  // namespace
}  // namespace kiln::bench
