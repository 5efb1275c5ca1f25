#include "plugins/cpp_openmp/tuning_space.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "plugins/cpp_openmp/codegen_ops.h"
#include "plugins/cpp_openmp/column_reduction_codegen.h"
#include "plugins/cpp_openmp/loop_text.h"
#include "plugins/kir_support/row_plan.h"

namespace kiln::cpu {
namespace {

int64_t parse_int(const std::string& key, const std::string& text, int64_t lo, int64_t hi) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < lo || v > hi) {
    throw std::invalid_argument("tuning config: " + key + "=" + text + " is not an integer in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

bool column_form(const kir::Kernel& k, const CodegenOptions& o) {
  if (k.kind != "reduction" || o.vector_width <= 1) return false;
  try {
    return prefers_columns(k, kir_support::plan_rows(k, 0), o);
  } catch (const std::exception&) {
    return false;
  }
}

int64_t elements(const kir::Kernel& k) {
  return product(k.ranges, 0, k.ranges.size()) *
         product(k.reduction_ranges, 0, k.reduction_ranges.size());
}

struct Knob {
  std::vector<CodegenOptions> values;  // values[0] is the base's
  bool exact = true;
};

}  // namespace

CodegenOptions apply_tuning(const std::string& config, CodegenOptions o, int max_threads) {
  std::istringstream words(config);
  for (std::string pair; words >> pair;) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("tuning config: '" + pair + "' is not key=value");
    const std::string key = pair.substr(0, eq), value = pair.substr(eq + 1);
    if (key == "threads") {
      o.threads = static_cast<int>(parse_int(key, value, 1, std::max(max_threads, 1)));
    } else if (key == "vector_width") {
      o.vector_width = static_cast<int>(parse_int(key, value, 1, 16));
      if (o.vector_width != 1 && o.vector_width != 4 && o.vector_width != 8 && o.vector_width != 16)
        throw std::invalid_argument("tuning config: vector_width must be 1, 4, 8 or 16");
    } else if (key == "tile") {
      const size_t x = value.find('x');
      if (x == std::string::npos)
        throw std::invalid_argument("tuning config: tile=" + value + " is not ROWSxCOLS");
      o.tile_rows = parse_int("tile rows", value.substr(0, x), 1, 4096);
      o.tile_cols = parse_int("tile columns", value.substr(x + 1), 1, 4096);
    } else if (key == "groups") {
      o.groups = parse_int(key, value, 0, 1) == 1;
    } else if (key == "column_block") {
      o.column_block_vectors = parse_int(key, value, 1, 64);
    } else {
      throw std::invalid_argument("tuning config: unknown key '" + key + "'");
    }
  }
  return o;
}

std::string tuning_line(const CodegenOptions& o) {
  return "threads=" + std::to_string(o.threads) +
         " vector_width=" + std::to_string(o.vector_width) +
         " tile=" + std::to_string(o.tile_rows) + "x" + std::to_string(o.tile_cols) +
         " groups=" + (o.groups ? "1" : "0") +
         " column_block=" + std::to_string(o.column_block_vectors);
}

std::string tuning_space_text(const kir::Kernel& k, const CodegenOptions& base,
                              int native_f32_lanes, size_t limit) {
  const bool reduction = k.kind == "reduction";
  std::vector<Knob> knobs;
  auto knob = [&](bool exact, auto values, auto set) {
    Knob kn{{base}, exact};
    for (auto v : values) {
      CodegenOptions c = base;
      set(c, v);
      if (tuning_line(c) != tuning_line(base)) kn.values.push_back(c);
    }
    if (kn.values.size() > 1) knobs.push_back(std::move(kn));
  };
  // Threads: half a team, and one thread where the whole kernel is small (~1 MiB of f32).
  std::vector<int> threads;
  if (base.threads >= 4) threads.push_back(base.threads / 2);
  if (base.threads > 1 && elements(k) <= (int64_t{1} << 18)) threads.push_back(1);
  knob(!reduction, threads, [](CodegenOptions& c, int t) { c.threads = t; });
  // Lane counts the CPU runs in one instruction; any other is emulated, never faster.
  std::vector<int> widths;
  for (int w : {4, 8, 16})
    if (w <= std::max(native_f32_lanes, 4)) widths.push_back(w);
  if (base.vector_width > 1)
    knob(false, widths, [](CodegenOptions& c, int w) { c.vector_width = w; });
  if (reads_transposed(k)) {
    const std::vector<std::pair<int64_t, int64_t>> tiles = {
        {16, 64}, {64, 64}, {32, 128}, {16, 256}, {8, 64}};
    knob(true, tiles, [](CodegenOptions& c, std::pair<int64_t, int64_t> t) {
      c.tile_rows = t.first;
      c.tile_cols = t.second;
    });
  }
  // Groups of vectors only where a loop is long enough to run them.
  const std::vector<int64_t>& walked = reduction ? k.reduction_ranges : k.ranges;
  if (base.vector_width > 1 && !walked.empty() && walked.back() >= kGroup * 8 &&
      k.body.size() <= kMaxGroupedOps) {
    knob(!reduction, std::vector<bool>{!base.groups},
         [](CodegenOptions& c, bool g) { c.groups = g; });
  }
  // Blocks over rows picked per step are sized by their rows, not by column_block.
  if (column_form(k, base) && !picks_rows(k)) {
    knob(true, std::vector<int64_t>{8, 16, 64},
         [](CodegenOptions& c, int64_t b) { c.column_block_vectors = b; });
  }
  // Every combination, fewest knobs away from the base first (then in knob order).
  struct Line {
    int changed;
    std::string text;
  };
  std::vector<Line> lines;
  std::vector<size_t> pick(knobs.size(), 0);
  while (true) {
    CodegenOptions c = base;
    int changed = 0;
    bool exact = true;
    for (size_t i = 0; i < knobs.size(); ++i) {
      if (pick[i] == 0) continue;
      ++changed;
      exact = exact && knobs[i].exact;
      const CodegenOptions& v = knobs[i].values[pick[i]];
      if (v.threads != base.threads) c.threads = v.threads;
      if (v.vector_width != base.vector_width) c.vector_width = v.vector_width;
      if (v.tile_rows != base.tile_rows || v.tile_cols != base.tile_cols)
        c.tile_rows = v.tile_rows, c.tile_cols = v.tile_cols;
      if (v.groups != base.groups) c.groups = v.groups;
      if (v.column_block_vectors != base.column_block_vectors)
        c.column_block_vectors = v.column_block_vectors;
    }
    lines.push_back({changed, tuning_line(c) + (exact ? "" : " exact=0")});
    size_t i = 0;
    while (i < knobs.size() && ++pick[i] == knobs[i].values.size()) pick[i++] = 0;
    if (i == knobs.size()) break;
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.changed < b.changed; });
  std::string text;
  for (size_t i = 0; i < lines.size() && i < limit; ++i) text += lines[i].text + "\n";
  return text;
}

}  // namespace kiln::cpu
