// The program under construction while a graph lowers: buffers, kernels in order, and the
// Access of every graph value lowered so far.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/lower/lower_context.h"
#include "core/lower/lower_options.h"

namespace kiln {

class ProgramBuilder {
 public:
  explicit ProgramBuilder(const Graph& graph, std::vector<std::string> externs = {},
                          LowerOptions options = {});

  int add_buffer(std::string name, DType dtype, int64_t elements,
                 BufferKind kind = BufferKind::Temp, ValueRef value = {});
  void set_access(ValueRef value, Access access);
  const Access& access(ValueRef value) const;
  bool has_access(ValueRef value) const;
  // "k<n>_<op>": unique, readable, and stable for the same graph.
  std::string kernel_name(const Node& node);
  void emit(LoopKernel kernel) { program_.kernels.push_back(std::move(kernel)); }
  // A pointwise copy of `a` into a fresh contiguous buffer.
  Access copy_to_contiguous(const Access& a, const std::string& origin);
  bool is_contiguous_buffer(const Access& a) const;
  // The run's random state (seed, call), one buffer for every random node.
  int random_state_buffer();
  // Whether the plugin offers library call `name` for `dtype`.
  bool offers_extern(const std::string& name, DType dtype) const;
  bool offers_extern_feature(const std::string& name, const std::string& feature) const;
  // The dtype parameter of library call `name` on `dtype` tensors: kir::kExternTf32 for f32
  // where `tf32_allowed` and the plugin lists `tf32` for the call, else the dtype's code.
  int64_t library_dtype(const std::string& name, DType dtype, bool tf32_allowed) const;
  // Whether the autotuner chose generated kernels over the library call of this signature.
  bool declines_library_call(const std::string& signature) const;
  // Whether float scatter sums must give the same bits every run.
  bool deterministic() const { return options_.deterministic; }
  const LowerOptions& options() const { return options_; }

  LoopProgram& program() { return program_; }

 private:
  const Graph& graph_;
  LoopProgram program_;
  std::vector<std::optional<Access>> access_;
  int kernels_named_ = 0;
  int random_state_ = -1;
  std::vector<std::string> externs_;
  LowerOptions options_;
};

}  // namespace kiln
