// LoopIR: what a graph lowers to. A LoopKernel is a Pointwise or Reduction loop nest with an
// SSA body, or an Extern call; buffers are the program's storage. Views never appear here:
// they became index expressions in the loads that read them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/expr/expr.h"
#include "core/expr/simplify.h"
#include "core/graph/graph.h"

namespace kiln {

// Scatter (as in KIR): a write at a data-dependent address into a buffer that already
// holds values, combined by `name` (store, sum, prod, max, min); the buffer is read and written.
// Scan (last, as in KIR): in a reduction kernel, the running `name` (kScanKinds) of its operand
// over the reduction dims in row-major order, up to and including this element; a kernel with
// a scan has no reduce.
enum class LoopOpKind {
  Load,
  Store,
  Const,
  Index,
  Cast,
  Where,
  Reduce,
  Extract,
  CheckIndex,
  Math,
  Scatter,
  Scan
};

// Reduction kinds; welford yields (mean, m2, count), read with Extract 0, 1, 2.
inline constexpr const char* kReduceKinds[] = {"sum",    "max",    "min",     "prod",
                                               "argmax", "argmin", "welford", "any"};

inline constexpr const char* kScanKinds[] = {"sum", "prod", "max", "min"};

struct LoopOp {
  LoopOpKind kind = LoopOpKind::Math;
  int id = -1;  // SSA id; -1 for stores
  DType dtype = DType::F32;
  std::string name;       // math op name, reduce kind or scatter combine
  std::vector<int> args;  // SSA operands
  int buffer = -1;        // load/store: program buffer id
  Expr index;             // load/store address (elements), or an Index op's value
  int mask = -1;          // load/store: a bool SSA value, or -1
  double other = 0;       // masked load: what masked-off elements read
  double value = 0;       // const
  int64_t number = 0;     // extract: component; check_index: dim size
};

enum class LoopKernelKind { Pointwise, Reduction, Extern };

struct LoopKernel {
  std::string name;    // unique in the program, e.g. "k3_add"
  std::string origin;  // the graph node it came from, for messages
  LoopKernelKind kind = LoopKernelKind::Pointwise;
  std::string extern_name;  // Extern: "mm", "bmm", or "reference" (the oracle on the host)
  Shape ranges;             // variables x0..: pointwise dims, outermost first
  Shape reduction_ranges;   // variables r0..
  std::vector<LoopOp> body;
  // Extern only: buffers in call order (inputs then outputs) and integer parameters.
  std::vector<int> extern_inputs;
  std::vector<int> extern_outputs;
  std::vector<std::pair<std::string, int64_t>> attrs;
  int node = -1;  // Extern "reference": the graph node it runs
};

// RandomState: i64[2] (seed, call) the runtime writes before each run (core/ops/random_stream.h).
enum class BufferKind { Input, Param, Temp, RandomState };

struct LoopBuffer {
  std::string name;  // the graph value it holds
  DType dtype = DType::F32;
  int64_t elements = 0;
  BufferKind kind = BufferKind::Temp;
  ValueRef value;  // Input/Param: the graph value whose storage it is
};

struct LoopProgram {
  std::vector<LoopBuffer> buffers;
  std::vector<LoopKernel> kernels;  // in execution order
  std::vector<int> outputs;         // per graph output: a contiguous buffer holding it
};

// An op with its kind, dtype, operands and (math, reduce) name; the rest left at defaults.
LoopOp make_loop_op(LoopOpKind kind, DType dtype, std::vector<int> args = {},
                    std::string name = {});

// Whether `op` names a buffer (load, store, scatter).
inline bool accesses_buffer(const LoopOp& op) {
  return op.kind == LoopOpKind::Load || op.kind == LoopOpKind::Store ||
         op.kind == LoopOpKind::Scatter;
}

// Whether `op` carries an index expression (load, store, scatter, index).
inline bool has_index(const LoopOp& op) {
  return accesses_buffer(op) || op.kind == LoopOpKind::Index;
}

// Whether `op` defines an SSA value (all but store and scatter).
inline bool defines_value(const LoopOp& op) {
  return op.kind != LoopOpKind::Store && op.kind != LoopOpKind::Scatter;
}

// Whether kernel `k` scatters: it must run alone, after its buffer's earlier writers and
// before its readers, with no other body merged into its loop.
bool scatters(const LoopKernel& k);
// Whether kernel `k` scans: its iterations along the reduction depend on the ones before, so
// nothing merges into it.
bool scans(const LoopKernel& k);

// What the simplifier may assume inside `k`: each loop variable within its range, and each
// checked index value (tN of a check_index) within its dim.
VarRanges loop_var_ranges(const LoopKernel& k);

// Extern parameter `key` of `k` (1 when absent).
int64_t extern_attr(const LoopKernel& k, const std::string& key);

// Buffers a kernel reads and writes, in first-use order (loads, then stores; externs: as called).
std::vector<int> kernel_reads(const LoopKernel& k);
std::vector<int> kernel_writes(const LoopKernel& k);

// True when pointwise kernel `k` stores `written` once and loads `read` only at that store's
// address, unmasked, before the store in body order: each element of `read` is consumed by
// the iteration that writes the same element of `written`, so two buffers with the same
// element size may share storage (in place).
bool reads_only_where_written(const LoopKernel& k, int read, int written);

}  // namespace kiln
