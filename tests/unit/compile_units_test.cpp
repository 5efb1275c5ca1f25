// How a graph's kernels are cut into compile units: one per kernel where the plugin asks,
// else one per tuning config, cut into up to one unit per compile thread (at least 4 kernels
// each), every kernel in exactly one unit, in order.
#include "core/runtime/compile_units.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

std::vector<kir::Kernel> kernels(size_t count) {
  std::vector<kir::Kernel> out(count);
  for (size_t i = 0; i < count; ++i) {
    out[i].name = "k" + std::to_string(i);
    out[i].kind = "pointwise";
    out[i].buffers = {{"out0", kir::DType::F32, 7, kir::Role::Out}};
    out[i].ranges = {7};
  }
  return out;
}

// Each unit's kernel indices.
std::vector<std::vector<size_t>> cut(size_t count, const std::vector<std::string>& configs,
                                     bool one_per_kernel, size_t threads) {
  std::vector<std::vector<size_t>> out;
  for (const CompileUnit& u : make_compile_units(kernels(count), configs, one_per_kernel, threads))
    out.push_back(u.kernels);
  return out;
}

using Cut = std::vector<std::vector<size_t>>;

TEST(CompileUnits, OneConfigIsCutForTheCompileThreads) {
  const std::vector<std::string> same(10, "");
  EXPECT_EQ(cut(10, same, false, 1), (Cut{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}));
  EXPECT_EQ(cut(10, same, false, 2), (Cut{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}));
  // At least 4 kernels a unit: 16 threads still make 2 units of 10 kernels.
  EXPECT_EQ(cut(10, same, false, 16), (Cut{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}));
  EXPECT_EQ(cut(7, std::vector<std::string>(7, ""), false, 16), (Cut{{0, 1, 2, 3, 4, 5, 6}}));
  EXPECT_EQ(cut(13, std::vector<std::string>(13, ""), false, 3),
            (Cut{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11, 12}}));
}

TEST(CompileUnits, ConfigsApartAndOnePerKernel) {
  const std::vector<std::string> two = {"", "a=1", "", "a=1", ""};
  EXPECT_EQ(cut(5, two, false, 8), (Cut{{0, 2, 4}, {1, 3}}));
  const auto units = make_compile_units(kernels(5), two, false, 8);
  EXPECT_EQ(units[1].config, "a=1");
  EXPECT_EQ(units[1].names, (std::vector<std::string>{"k1", "k3"}));
  EXPECT_EQ(cut(3, {"", "", ""}, true, 1), (Cut{{0}, {1}, {2}}));
}

}  // namespace
}  // namespace kiln
