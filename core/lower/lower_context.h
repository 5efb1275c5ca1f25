// What a lowering rule sees while it lowers one graph node: how each operand is stored
// (an Access: a buffer and an index expression over the operand's logical dims d0, d1, ...),
// and how to add buffers, kernels and views to the program.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/lower/kernel_builder.h"
#include "core/lower/lower_options.h"
#include "core/ops/arg_view.h"

namespace kiln {

// Where a graph value's elements live: element (d0, d1, ...) is at buffer[index].
struct Access {
  int buffer = -1;
  Expr index;  // over variables d0.. of the value's logical shape
  TensorType type;
};

// The variable for logical dim i of an Access index.
Expr dim_var(size_t i);
// sum(vars[i] * contiguous_stride[i]) for a row-major tensor of `sizes`.
Expr contiguous_index(const Shape& sizes, const std::vector<Expr>& vars);
// Its inverse: the coordinates of row-major element `linear` of a tensor of `sizes`.
std::vector<Expr> unravel_index(const Expr& linear, const Shape& sizes);
// The Access of `buffer` holding a tensor of type `t` packed with its dims in `order`
// (outermost first; {0, 2, 3, 1}: channels-last).
Access packed_access(int buffer, const TensorType& t, const std::vector<size_t>& order);

class ProgramBuilder;

class NodeLowering {
 public:
  NodeLowering(ProgramBuilder& program, const Graph& graph, int node_index);

  const Node& node() const { return *node_; }
  int node_index() const { return node_index_; }
  const ArgView& args() const { return args_; }
  const TensorType& in_type(int arg) const;
  const TensorType& out_type(size_t k = 0) const;
  const Access& operand(int arg) const;
  // The node that computes tensor argument `arg`, or nullptr for inputs and parameters.
  const Node* producer(int arg) const;
  const Access& list_operand(int arg, size_t i) const;
  // Whether operand `arg`'s buffer is exactly its value's storage (dtype and extent), not a
  // larger buffer it views.
  bool operand_in_own_storage(int arg) const;

  // A kernel named after the node, iterating over `ranges` (and `reduction_ranges`).
  KernelBuilder kernel(const Shape& ranges, const Shape& reduction_ranges = {});
  // The address of element `idx` of a value stored as `a` (simplified in `kb`'s ranges).
  Expr address(const KernelBuilder& kb, const Access& a, const std::vector<Expr>& idx) const;
  int load(KernelBuilder& kb, const Access& a, const std::vector<Expr>& idx, int mask = -1,
           double other = 0) const;
  // Loads operand `arg` broadcast to `out_sizes` at the kernel's pointwise variables,
  // cast to `compute`. A wrapped number becomes a constant rounded to `round` first.
  int load_operand(KernelBuilder& kb, int arg, const Shape& out_sizes, DType compute,
                   DType round) const;

  // A fresh contiguous buffer for output k; records it as that output's storage.
  Access realize_output(size_t k = 0);
  // The same laid out with output k's dims in `order`, outermost first ({0, 2, 3, 1}:
  // channels-last); the Access reads it over the output's own dims.
  Access realize_output_in_order(size_t k, const std::vector<size_t>& order);
  // Whether output k is read, by a later node or as a graph output. An output nobody reads
  // needs no storage and no stores (max_pool's indices, dropout's mask, a bag's counts).
  bool output_read(size_t k) const;
  // The later nodes that read output k, and whether it is one of the graph's outputs.
  std::vector<const Node*> readers(size_t k) const;
  bool graph_output(size_t k) const;
  // Stores `value`, cast to output k's dtype, into output k (realized here) at the kernel's
  // pointwise variables, and emits the kernel.
  void store_output(KernelBuilder& kb, int value, size_t k = 0);
  // Output k is a view: it reads another value's storage through `index` (over d0..).
  void define_view(size_t k, int buffer, const Expr& index);
  void emit(LoopKernel kernel);
  // A scratch buffer for values between this node's kernels ("<node>/<suffix>").
  int temp_buffer(const std::string& suffix, DType dtype, int64_t elements);
  // A contiguous buffer with the value of `a` (a itself when it already is one).
  Access contiguous(const Access& a);
  // A kernel that sets every element of `buffer` (contiguous over `sizes`) to `value`.
  void fill(int buffer, const Shape& sizes, DType dtype, double value);
  // The run's random state buffer, i64[2]: (seed, call).
  int random_state_buffer();
  // Whether the plugin offers library call `name` for `dtype` (lower_graph's externs).
  bool offers_extern(const std::string& name, DType dtype) const;
  // Whether the plugin lists `feature` for library call `name` (extern_list.h).
  bool offers_extern_feature(const std::string& name, const std::string& feature) const;
  // Whether the autotuner chose generated kernels over the library call of this signature.
  bool declines_library_call(const std::string& signature) const;
  // Whether float scatter sums must give the same bits every run.
  bool deterministic() const;
  // Library call `name`'s dtype parameter (ProgramBuilder::library_dtype).
  int64_t library_dtype(const std::string& name, DType dtype, bool tf32_allowed) const;
  const LowerOptions& options() const;

 private:
  ProgramBuilder& program_;
  const Graph& graph_;
  const Node* node_;
  int node_index_;
  ArgView args_;
};

// A lowering rule: lowers the node and returns true, or returns false (before emitting
// anything) when this instance is not supported; the node then runs on the host oracle.
using LowerFn = std::function<bool(NodeLowering&)>;

// The rules by op name; one table per file under core/lower.
std::map<std::string, LowerFn> pointwise_lowerings();
std::map<std::string, LowerFn> reduction_lowerings();
// Any op that describes itself with ViewSpecs (core/ops/view_spec.h).
bool lower_view(NodeLowering& n);
std::map<std::string, LowerFn> data_movement_lowerings();
std::map<std::string, LowerFn> matmul_lowerings();
std::map<std::string, LowerFn> scatter_lowerings();
std::map<std::string, LowerFn> pool_lowerings();
std::map<std::string, LowerFn> conv_lowerings();
std::map<std::string, LowerFn> pool_backward_lowerings();
std::map<std::string, LowerFn> embed_lowerings();
std::map<std::string, LowerFn> upsample_lowerings();
std::map<std::string, LowerFn> distance_lowerings();
std::map<std::string, LowerFn> fold_lowerings();
std::map<std::string, LowerFn> scan_sort_lowerings();
std::map<std::string, LowerFn> grid_sampler_lowerings();
std::map<std::string, LowerFn> masked_scatter_lowerings();
std::map<std::string, LowerFn> embedding_bag_lowerings();
std::map<std::string, LowerFn> random_lowerings();

// [offset, stride of d0, stride of d1, ...] when `a`'s index is exactly affine in its dims.
std::optional<std::vector<int64_t>> affine_strides(const Access& a);

// An mm (rank-2 operands) or bmm (rank 3) library call writing the contiguous product into
// `out_buffer`: operands pass by offset and strides (a copy first when not affine in their
// dims); a plugin without the library gets a generated matmul instead. `node` is the graph
// node the call stands for, or -1 when it is only part of one (a 1x1 convolution);
// `tf32_allowed`: f32 products may round to TF32 where the plugin's library lists it.
bool emit_matmul_call(NodeLowering& n, Access a, Access b, int out_buffer, DType dtype, int node,
                      bool tf32_allowed);

// The dtype elementwise math runs in: f16/bf16/f32 compute in f32, f64 in f64, integers and
// bools in i64 (results are cast to the output dtype when stored).
DType compute_dtype(DType d);

}  // namespace kiln
