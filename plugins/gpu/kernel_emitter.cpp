#include "plugins/gpu/kernel_emitter.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <stdexcept>

#include "plugins/gpu/online_softmax.h"
#include "plugins/gpu/reduce_state.h"
#include "plugins/gpu/value_emitter.h"
#include "plugins/kir_support/kir_expr.h"
#include "plugins/kir_support/row_plan.h"

namespace kiln::gpu {
namespace {

using llvm::Value;

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Variables <prefix>0.. of `sizes` from their row-major flattening `flat`.
void unflatten(llvm::IRBuilder<>& b, const std::vector<int64_t>& sizes, const std::string& prefix,
               Value* flat, Scope& s) {
  llvm::Type* t = flat->getType();
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    Value* v = stride == 1
                   ? flat
                   : b.CreateUDiv(flat, llvm::ConstantInt::get(t, static_cast<uint64_t>(stride)));
    if (i > 0) v = b.CreateURem(v, llvm::ConstantInt::get(t, static_cast<uint64_t>(sizes[i])));
    s.vars[prefix + std::to_string(i)] = v;
    stride *= sizes[i];
  }
}

// for (i = start; i < end; i += step) body(i): a loop in the index type through a stack slot.
// Returns i after the loop.
template <class Body>
Value* counted_loop(ValueEmitter& e, Value* start, Value* end, Value* step, const std::string& name,
                    Body body) {
  llvm::IRBuilder<>& b = e.builder();
  llvm::AllocaInst* i = e.slot(e.index_type(), name);
  b.CreateStore(start, i);
  llvm::Function* f = e.function();
  auto* check = llvm::BasicBlock::Create(b.getContext(), name + "_check", f);
  auto* loop = llvm::BasicBlock::Create(b.getContext(), name + "_body", f);
  auto* done = llvm::BasicBlock::Create(b.getContext(), name + "_done", f);
  b.CreateBr(check);
  b.SetInsertPoint(check);
  Value* iv = b.CreateLoad(e.index_type(), i);
  b.CreateCondBr(b.CreateICmpSLT(iv, end), loop, done);
  b.SetInsertPoint(loop);
  body(iv);
  b.CreateStore(b.CreateAdd(iv, step), i);
  b.CreateBr(check);
  b.SetInsertPoint(done);
  return b.CreateLoad(e.index_type(), i);
}

class KernelEmitter {
 public:
  KernelEmitter(llvm::Module& m, const GpuTarget& t, const kir::Kernel& k, const TuningConfig& c)
      : m_(m), t_(t), k_(k), c_(c), b_(m.getContext()) {}

  llvm::Function* emit() {
    auto& ctx = m_.getContext();
    llvm::Type* ptr = llvm::PointerType::get(ctx, t_.global_space());
    std::vector<llvm::Type*> params(k_.buffers.size() + 1, ptr);
    auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, k_.name, m_);
    std::map<std::string, Value*> buffers;
    for (size_t i = 0; i < k_.buffers.size(); ++i) {
      llvm::Argument* a = fn_->getArg(static_cast<unsigned>(i));
      a->setName(k_.buffers[i].name);
      a->addAttr(llvm::Attribute::NoAlias);
      if (k_.buffers[i].role == kir::Role::In) a->addAttr(llvm::Attribute::ReadOnly);
      buffers[k_.buffers[i].name] = a;
    }
    llvm::Argument* status = fn_->getArg(static_cast<unsigned>(k_.buffers.size()));
    status->setName("status");
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn_));
    index_ = fits_in_32_bits() ? b_.getInt32Ty() : b_.getInt64Ty();
    ValueEmitter e(b_, m_, t_, k_, std::move(buffers), status, index_);
    if (k_.kind == "reduction")
      reduction(e);
    else
      pointwise(e);
    b_.CreateRetVoid();
    t_.mark_kernel(*fn_, c_.block_size);
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyFunction(*fn_, &os)) throw std::runtime_error("invalid LLVM IR: " + problems);
    return fn_;
  }

 private:
  // Ids (i32) and sizes in the kernel's index type.
  Value* i64(Value* v) { return b_.CreateZExtOrTrunc(v, index_); }
  Value* size(int64_t n) { return llvm::ConstantInt::get(index_, static_cast<uint64_t>(n)); }

  // 32-bit addresses when every buffer and the iteration space stay well under 2^31 (a
  // quarter of it: partial sums of an index may exceed its final value).
  bool fits_in_32_bits() const {
    constexpr int64_t kLimit = int64_t{1} << 29;
    int64_t points = product(k_.ranges) * std::max<int64_t>(product(k_.reduction_ranges), 1);
    bool fits = points < kLimit;
    for (const kir::Buffer& b : k_.buffers) fits = fits && b.elements < kLimit;
    return fits;
  }

  // Each thread takes `kVector` consecutive elements of a row per step when rows split into
  // such runs: loads and stores that walk the row contiguously then line up on 16 bytes, and
  // the backend's load/store vectorizer joins them into one 128-bit access.
  static constexpr int64_t kVector = 4;
  // Scans of rows this long give each lane kRunsPerLane runs of kVector per step.
  static constexpr int64_t kLongScanRow = 4096;
  static constexpr int64_t kRunsPerLane = 4;

  // Where a block-wide scan's warps meet (scratch null: a warp per row).
  struct BlockScanSpace {
    unsigned warps = 0;
    Value* warp = nullptr;  // i32: this thread's warp in the block
    llvm::GlobalVariable* scratch = nullptr;
    llvm::ArrayType* type = nullptr;
  };

  // This thread's first global index and the stride of a grid-stride loop.
  std::pair<Value*, Value*> grid_stride() {
    Value* start = b_.CreateAdd(b_.CreateMul(i64(t_.block_id(b_)), i64(t_.block_dim(b_))),
                                i64(t_.thread_id(b_)));
    return {start, b_.CreateMul(i64(t_.grid_dim(b_)), i64(t_.block_dim(b_)))};
  }

  // Pointwise kernels whose buffers all hold elements of 2 bytes or less take runs of
  // 2 * kVector: 16-byte accesses, as runs of kVector give f32. bf16 SwiGLU ran at 0.78 of
  // copy bandwidth with 8-byte runs (Inductor's 16-byte accesses: 0.80 of its time).
  int64_t pointwise_vector() const {
    for (const kir::Buffer& b : k_.buffers)
      if (kir::dtype_size(b.dtype) > 2) return kVector;
    return 2 * kVector;
  }

  // The `width` scopes of a run that starts at `first`: `var` steps by one from lane to lane.
  std::vector<Scope> run_lanes(const Scope& first, const std::string& var,
                               int64_t width = kVector) {
    std::vector<Scope> lanes(static_cast<size_t>(width), first);
    for (int64_t j = 0; j < width; ++j) {
      Scope& s = lanes[static_cast<size_t>(j)];
      s.aligned_var = var;
      s.aligned_multiple = width;
      s.lane = j;
      s.lane_base = first.vars.at(var);
      if (j > 0) s.vars[var] = b_.CreateAdd(first.vars.at(var), size(j));
    }
    return lanes;
  }

  // A load that walks memory with a stride along `var` (a transposed operand): runs along
  // it would make each thread read down a column, worse for coalescing than one element.
  static bool strided_along(const kir::Op& op, const std::string& var) {
    if (op.kind != kir::OpKind::Load) return false;
    const int64_t c = ValueEmitter::coefficient(op.index, var);
    return c != 0 && c != 1;
  }

  void pointwise(ValueEmitter& e) {
    if (auto staged = tiled_loads(k_, c_, t_.warp_width()); !staged.empty()) {
      tiled_pointwise(e, staged);
      return;
    }
    const int64_t n = product(k_.ranges);
    const int64_t inner = k_.ranges.empty() ? 1 : k_.ranges.back();
    if (!strided_inner_load())
      for (const int64_t width : {pointwise_vector(), kVector}) {
        if (inner % width == 0 && n >= width) {
          vector_pointwise(e, n, width);
          return;
        }
      }
    const auto [start, step] = grid_stride();
    counted_loop(e, start, size(n), step, "element", [&](Value* i) {
      Scope s;
      unflatten(b_, k_.ranges, "x", i, s);
      for (const kir::Op& op : k_.body) e.emit(op, s);
    });
  }

  // A kernel that reads an operand transposed, tile by tile (warp x warp elements of the last
  // two dims): the block first reads each staged load's tile along that operand's contiguous
  // dim into shared memory, then computes the tile along the output's contiguous dim, taking
  // the staged values from shared memory. Both phases touch memory coalesced.
  // The loads of the body that read a staged load's buffer at its mirror element (a[i, j]
  // beside a[j, i]): load id -> the staged load. Empty unless every load is staged or such a
  // mirror and the last two dims are square, when a block can take a tile and its mirror tile
  // together and read nothing twice.
  std::map<int, const kir::Op*> mirrored_loads(const std::vector<const kir::Op*>& staged,
                                               const std::string& var_a,
                                               const std::string& var_b) const {
    std::map<int, const kir::Op*> out;
    const size_t d = k_.ranges.size();
    if (k_.ranges[d - 2] != k_.ranges[d - 1]) return {};
    for (const kir::Op& op : k_.body) {
      if (op.kind != kir::OpKind::Load) continue;
      if (std::find(staged.begin(), staged.end(), &op) != staged.end()) continue;
      std::map<std::string, int64_t> mine;
      if (op.mask >= 0 || !kir_support::linear_terms(op.index, 1, mine)) return {};
      const kir::Op* twin = nullptr;
      for (const kir::Op* st : staged) {
        std::map<std::string, int64_t> theirs;
        kir_support::linear_terms(st->index, 1, theirs);
        std::swap(theirs[var_a], theirs[var_b]);
        std::erase_if(theirs, [](const auto& t) { return t.second == 0; });
        if (st->name == op.name && st->dtype == op.dtype && theirs == mine) twin = st;
      }
      if (!twin) return {};
      out[op.id] = twin;
    }
    return out;
  }

  // A kernel that reads an operand transposed, tile by tile (warp x warp elements of the last
  // two dims): the block first reads each staged load's tile along that operand's contiguous
  // dim into shared memory, then computes the tile along the output's contiguous dim, taking
  // the staged values from shared memory. Both phases touch memory coalesced. When the other
  // loads are the staged ones' mirrors (a + a^T), the block takes tile (I, J) and its mirror
  // (J, I) together: both staged, both computed from shared memory, each input read once.
  void tiled_pointwise(ValueEmitter& e, const std::vector<const kir::Op*>& staged) {
    const size_t d = k_.ranges.size();
    const int64_t tile = t_.warp_width(), rows = c_.block_size / t_.warp_width();
    const int64_t extent_a = k_.ranges[d - 2], extent_b = k_.ranges[d - 1];
    const int64_t tiles_a = (extent_a + tile - 1) / tile, tiles_b = (extent_b + tile - 1) / tile;
    const std::vector<int64_t> outer(k_.ranges.begin(), k_.ranges.end() - 2);
    const std::string var_a = "x" + std::to_string(d - 2), var_b = "x" + std::to_string(d - 1);
    const std::map<int, const kir::Op*> mirrors = mirrored_loads(staged, var_a, var_b);
    const bool pairs = !mirrors.empty();
    // Padded tiles per staged load (the +1 column keeps the column reads conflict-free): set 0
    // for tile (I, J), set 1 for its mirror (J, I) in pair mode.
    std::map<int, llvm::GlobalVariable*> smem[2];
    for (int set = 0; set < (pairs ? 2 : 1); ++set) {
      for (const kir::Op* op : staged) {
        auto* type = llvm::ArrayType::get(e.register_type(op->dtype),
                                          static_cast<uint64_t>(tile * (tile + 1)));
        auto* g = new llvm::GlobalVariable(
            m_, type, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(type),
            k_.name + "_tile" + std::to_string(op->id) + (set ? "_mirror" : ""), nullptr,
            llvm::GlobalValue::NotThreadLocal, t_.shared_space());
        g->setAlignment(llvm::Align(16));
        smem[set][op->id] = g;
      }
    }
    auto cell = [&](int set, const kir::Op* op, Value* row, Value* col) {
      llvm::GlobalVariable* g = smem[set].at(op->id);
      Value* at = b_.CreateAdd(b_.CreateMul(row, size(tile + 1)), col);
      return b_.CreateGEP(g->getValueType(), g, {size(0), at});
    };
    Value* tx = i64(b_.CreateURem(t_.thread_id(b_), b_.getInt32(static_cast<uint32_t>(tile))));
    Value* ty = i64(b_.CreateUDiv(t_.thread_id(b_), b_.getInt32(static_cast<uint32_t>(tile))));
    auto when = [&](Value* cond, auto body) { branch_if(cond, "in_tile", "tile_next", body); };
    // Runs `body` for element (a, b) of a tile when it lies inside the kernel's ranges.
    auto inside = [&](Value* a, Value* bb, const Scope& base, auto body) {
      when(b_.CreateAnd(b_.CreateICmpSLT(a, size(extent_a)), b_.CreateICmpSLT(bb, size(extent_b))),
           [&] {
             Scope s = base;
             s.vars[var_a] = a;
             s.vars[var_b] = bb;
             body(s);
           });
    };
    // Stage tile (a0, b0) of every staged load into `set`: lanes walk dim a.
    auto stage = [&](Value* a0, Value* b0, const Scope& base, int set) {
      for (int64_t k = 0; k < tile; k += rows) {
        Value* row = b_.CreateAdd(ty, size(k));
        inside(b_.CreateAdd(a0, tx), b_.CreateAdd(b0, row), base, [&](Scope& s) {
          for (const kir::Op* op : staged) {
            e.emit(*op, s);
            b_.CreateStore(s.values.at(op->id), cell(set, op, row, tx));
          }
        });
      }
    };
    // Compute output tile (a0, b0): lanes walk dim b; staged values from `set`'s columns,
    // mirrored ones from the other set's rows.
    auto compute = [&](Value* a0, Value* b0, const Scope& base, int set) {
      for (int64_t k = 0; k < tile; k += rows) {
        Value* row = b_.CreateAdd(ty, size(k));
        inside(b_.CreateAdd(a0, row), b_.CreateAdd(b0, tx), base, [&](Scope& s) {
          for (const kir::Op* op : staged)
            s.values[op->id] = b_.CreateLoad(e.register_type(op->dtype), cell(set, op, tx, row));
          for (const auto& [id, twin] : mirrors)
            s.values[id] =
                b_.CreateLoad(e.register_type(twin->dtype), cell(1 - set, twin, row, tx));
          for (const kir::Op& op : k_.body)
            if (!s.values.count(op.id)) e.emit(op, s);
        });
      }
    };
    counted_loop(e, i64(t_.block_id(b_)), size(tiles_a * tiles_b * product(outer)),
                 i64(t_.grid_dim(b_)), "tile", [&](Value* t) {
                   Value* ta = b_.CreateURem(b_.CreateUDiv(t, size(tiles_b)), size(tiles_a));
                   Value* tb = b_.CreateURem(t, size(tiles_b));
                   Value* a0 = b_.CreateMul(ta, size(tile));
                   Value* b0 = b_.CreateMul(tb, size(tile));
                   Scope base;
                   if (!outer.empty())
                     unflatten(b_, outer, "x", b_.CreateUDiv(t, size(tiles_a * tiles_b)), base);
                   auto one = [&] {
                     stage(a0, b0, base, 0);
                     if (pairs) stage(b0, a0, base, 1);
                     t_.barrier(b_);
                     compute(a0, b0, base, 0);
                     if (pairs) when(b_.CreateICmpNE(ta, tb), [&] { compute(b0, a0, base, 1); });
                     t_.barrier(b_);  // the next tile overwrites shared memory
                   };
                   if (pairs) {
                     when(b_.CreateICmpULE(ta, tb),
                          one);  // the upper triangle of tiles, each with its mirror
                   } else {
                     one();
                   }
                 });
  }

  // Whether a pass walks its row in runs of kVector: the innermost reduced dim splits into
  // runs and no load of the pass reads it with a stride.
  bool row_runs(const kir_support::RowPass& pass) const {
    if (k_.reduction_ranges.empty() || k_.reduction_ranges.back() % kVector != 0) return false;
    const std::string last = "r" + std::to_string(k_.reduction_ranges.size() - 1);
    return std::none_of(pass.ops.begin(), pass.ops.end(),
                        [&](const kir::Op* op) { return strided_along(*op, last); });
  }

  // Elements a thread takes per step when it walks a row from memory one element at a time
  // (the row's threads apart): the walk_lanes knob, by default 8 when every element the pass
  // loads is 2 bytes or less, else 4; 1 when the row is too short for two such steps.
  int64_t strided_lanes(const kir_support::RowPass& pass, int64_t n, unsigned per_row) const {
    const bool narrow = std::all_of(pass.ops.begin(), pass.ops.end(), [&](const kir::Op* op) {
      const kir::Buffer* b = op->kind == kir::OpKind::Load ? k_.buffer(op->name) : nullptr;
      return op->kind != kir::OpKind::Load || (b && kir::dtype_size(b->dtype) <= 2);
    });
    const int64_t lanes = c_.walk_lanes > 0 ? c_.walk_lanes : narrow ? 2 * kVector : kVector;
    return n >= 2 * lanes * static_cast<int64_t>(per_row) ? lanes : 1;
  }

  bool all_passes_run(const kir_support::RowPlan& plan) const {
    return std::all_of(plan.passes.begin(), plan.passes.end(),
                       [&](const kir_support::RowPass& p) { return row_runs(p); });
  }

  // The run a reduction's thread takes per step when its passes walk the row in runs: 2 *
  // kVector when every element the passes load or store is 2 bytes or less and the row
  // splits so (16-byte accesses, as kVector gives f32; bf16 rows loaded 4 bytes at a time).
  int64_t row_vector(const kir_support::RowPlan& plan) const {
    if (k_.reduction_ranges.back() % (2 * kVector) != 0) return kVector;
    for (const kir_support::RowPass& pass : plan.passes)
      for (const kir::Op* op : pass.ops)
        if (op->kind == kir::OpKind::Load || op->kind == kir::OpKind::Store) {
          const kir::Buffer* b = k_.buffer(op->name);
          if (!b || kir::dtype_size(b->dtype) > 2) return kVector;
        }
    return 2 * kVector;
  }

  // Elements of a row each thread keeps in registers across the passes of a multi-pass
  // reduction (softmax, norms), or 0 to walk the row again in every pass: the row's runs of
  // `width` dealt round the row's threads, within the config's limit per thread. When they
  // do not deal evenly (a 32000 or 50257 vocabulary), the last step's runs past the row's
  // end are masked (see `tail` in reduction()).
  int64_t persistent_elements(const kir_support::RowPlan& plan, unsigned per_row,
                              int64_t width) const {
    const int64_t runs = product(k_.reduction_ranges) / width;
    if (plan.passes.size() < 2) return 0;
    const int64_t each = (runs + per_row - 1) / per_row * width;
    return each > c_.persistent_limit ? 0 : each;
  }

  // Runs `body` in a block entered when `cond` holds (a barrier inside only when `cond` is
  // the same for the whole block, as a tile index is).
  template <class Body>
  void branch_if(Value* cond, const char* then_name, const char* after_name, Body body) {
    auto* then = llvm::BasicBlock::Create(b_.getContext(), then_name, fn_);
    auto* after = llvm::BasicBlock::Create(b_.getContext(), after_name, fn_);
    b_.CreateCondBr(cond, then, after);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }

  bool strided_inner_load() const {
    const std::string last = "x" + std::to_string(k_.ranges.size() - 1);
    return std::any_of(k_.body.begin(), k_.body.end(),
                       [&](const kir::Op& op) { return strided_along(op, last); });
  }

  // Each thread takes runs of `width` contiguous elements along the last dim.
  void vector_pointwise(ValueEmitter& e, int64_t n, int64_t width) {
    const std::string last = "x" + std::to_string(k_.ranges.size() - 1);
    const auto [start, step] = grid_stride();
    // `count` runs per step, grid-stride apart (each warp's accesses stay contiguous): all
    // their loads are issued before the first result is needed.
    auto runs = [&](Value* run, int64_t count) {
      std::vector<Scope> lanes;
      for (int64_t u = 0; u < count; ++u) {
        Value* q = u == 0 ? run : b_.CreateAdd(run, b_.CreateMul(step, size(u)));
        Scope first;
        unflatten(b_, k_.ranges, "x", b_.CreateMul(q, size(width)), first);
        for (Scope& s : run_lanes(first, last, width)) lanes.push_back(std::move(s));
      }
      // Op by op across the runs, so their loads (and stores) sit side by side.
      for (const kir::Op& op : k_.body)
        for (Scope& s : lanes) e.emit(op, s);
    };
    const int64_t count = std::max<int64_t>(c_.runs_per_step, 1);
    Value* rest = start;
    if (count > 1) {
      Value* end = b_.CreateSub(size(n / width), b_.CreateMul(step, size(count - 1)));
      rest = counted_loop(e, start, end, b_.CreateMul(step, size(count)), "runs",
                          [&](Value* q) { runs(q, count); });
    }
    counted_loop(e, rest, size(n / width), step, "run", [&](Value* q) { runs(q, 1); });
  }

  // Row-level stores are made by one thread; every other row op runs in every thread.
  void row_op(ValueEmitter& e, const kir::Op& op, Scope& s,
              const std::map<int, std::vector<Value*>>& states,
              const std::map<int, ReduceState>& kinds) {
    if (op.kind == kir::OpKind::Extract) {
      const int w = op.args.at(0);
      s.values[op.id] = kinds.at(w).component(states.at(w), op.number);
      return;
    }
    if (op.kind != kir::OpKind::Store) {
      e.emit(op, s);
      return;
    }
    Value* first = b_.CreateICmpEQ(lane_, size(0));
    if (row_valid_) first = b_.CreateAnd(first, row_valid_);
    branch_if(first, "row_store", "row_stored", [&] { e.emit(op, s); });
  }

  // A scan kernel (one pass, no reduces): a row per thread walks its elements in order; a
  // row per warp walks it a step at a time (each lane one element or runs of kVector), scans
  // each step across the lanes and carries the step's last value into the next. Lanes past
  // the row's end compute its last elements again (their loads stay in bounds), add the
  // identity and store nothing.
  void scan_rows(ValueEmitter& e, const kir_support::RowPlan& plan) {
    const int64_t rows = product(k_.ranges), n = product(k_.reduction_ranges);
    const unsigned warp = t_.warp_width();
    const unsigned per_row = row_threads(k_, c_, warp);
    Value* tid = t_.thread_id(b_);
    Value* lane32 = b_.CreateURem(tid, b_.getInt32(warp));
    lane_ = per_row == 1 ? size(0) : i64(b_.CreateURem(tid, b_.getInt32(per_row)));
    Value* slot = i64(b_.CreateUDiv(tid, b_.getInt32(per_row)));
    // A row across the block: its warps' totals meet in shared memory each step.
    BlockScanSpace block;
    if (per_row > warp) {
      block.warps = per_row / warp;
      block.warp = b_.CreateUDiv(tid, b_.getInt32(warp));
      block.type = llvm::ArrayType::get(b_.getInt64Ty(), 32);
      block.scratch =
          new llvm::GlobalVariable(m_, block.type, false, llvm::GlobalValue::InternalLinkage,
                                   llvm::UndefValue::get(block.type), "scan_totals", nullptr,
                                   llvm::GlobalValue::NotThreadLocal, t_.shared_space());
    }
    const unsigned block_rows = rows_per_block(k_, c_, warp);
    Value* first = b_.CreateAdd(b_.CreateMul(i64(t_.block_id(b_)), size(block_rows)), slot);
    Value* row_step = b_.CreateMul(i64(t_.grid_dim(b_)), size(block_rows));
    const kir_support::RowPass& pass = plan.passes.at(0);
    counted_loop(e, first, size(rows), row_step, "row", [&](Value* row) {
      Scope rs;
      unflatten(b_, k_.ranges, "x", row, rs);
      for (const kir::Op* op : plan.stages[0]) row_op(e, *op, rs, {}, {});
      std::map<int, ReduceState> kinds;
      std::map<int, llvm::AllocaInst*> carry;
      for (const kir::Op* op : pass.ops) {
        if (op->kind != kir::OpKind::Scan) continue;
        const kir::DType operand = e.dtype_of(op->args.at(0));
        const ReduceState& st =
            kinds.emplace(op->id, ReduceState(b_, op->name, operand, e.register_type(operand)))
                .first->second;
        carry[op->id] = e.slot(st.types()[0], "carry");
        b_.CreateStore(st.identity()[0], carry[op->id]);
      }
      // A warp's lanes take runs of kVector contiguous elements when the row splits into
      // them (a run is then wholly inside the row or wholly past it), kRunsPerLane runs side
      // by side on long rows: fewer steps, their loads issued together.
      const int64_t width = per_row > 1 && row_runs(pass) ? kVector : 1;
      int64_t runs = width > 1 && n >= kLongScanRow ? kRunsPerLane : 1;
      if (block.scratch)  // no more runs than the row needs to fit one step
        runs = std::clamp<int64_t>((n + per_row * width - 1) / (per_row * width), 1, runs);
      const int64_t per_lane = width * runs, step_elements = per_row * per_lane;
      const int64_t steps = (n + step_elements - 1) / step_elements;
      const std::string last = "r" + std::to_string(k_.reduction_ranges.size() - 1);
      counted_loop(e, size(0), size(steps), size(1), "step", [&](Value* step) {
        Value* at = per_row == 1 ? step
                                 : b_.CreateAdd(b_.CreateMul(step, size(step_elements)),
                                                b_.CreateMul(lane_, size(per_lane)));
        // This thread's elements in order, and whether each lies inside the row.
        std::vector<Scope> lanes;
        std::vector<Value*> inside;
        for (int64_t q = 0; q < runs; ++q) {
          Value* start = b_.CreateAdd(at, size(q * width));
          Value* valid = per_row == 1 ? nullptr : b_.CreateICmpULT(start, size(n));
          Scope run = rs;
          unflatten(b_, k_.reduction_ranges, "r",
                    valid ? b_.CreateSelect(valid, start, size(n - width)) : start, run);
          for (Scope& s : width > 1 ? run_lanes(run, last) : std::vector<Scope>{run}) {
            lanes.push_back(std::move(s));
            inside.push_back(valid);
          }
        }
        for (const kir::Op* op : pass.ops) {
          if (op->kind == kir::OpKind::Scan) {
            scan_step(e, *op, kinds.at(op->id), carry.at(op->id), lanes, inside, lane32, at, block);
            continue;
          }
          for (size_t j = 0; j < lanes.size(); j += static_cast<size_t>(width)) {
            auto emit_run = [&] {
              for (size_t i = j; i < j + static_cast<size_t>(width); ++i) e.emit(*op, lanes[i]);
            };
            if (op->kind == kir::OpKind::Store && inside[j])
              branch_if(inside[j], "scan_store", "scan_stored", emit_run);
            else
              emit_run();
          }
        }
      });
    });
  }

  // One step of scan `op` over `lanes` (a thread's elements of this step, in order):
  // sequentially for a row of its own thread; else each lane's elements in order, the lanes'
  // totals scanned across the warp, each element given the carry and the lanes before its
  // own, and the step's total carried on. Elements past the row (`inside` off) add the
  // identity.
  void scan_step(ValueEmitter& e, const kir::Op& op, const ReduceState& st, llvm::AllocaInst* carry,
                 std::vector<Scope>& lanes, const std::vector<Value*>& inside, Value* lane32,
                 Value* at, const BlockScanSpace& block) {
    Value* carried = b_.CreateLoad(st.types()[0], carry);
    std::vector<Value*> so_far;
    if (!inside[0]) {
      so_far.push_back(st.accumulate({carried}, lanes[0].values.at(op.args.at(0)),
                                     b_.CreateZExt(at, b_.getInt64Ty()))[0]);
      b_.CreateStore(so_far[0], carry);
    } else {
      std::vector<Value*> run;  // this lane's elements scanned in order
      for (size_t j = 0; j < lanes.size(); ++j) {
        Value* x = b_.CreateSelect(inside[j], lanes[j].values.at(op.args.at(0)), st.identity()[0]);
        run.push_back(run.empty() ? x : st.combine({run.back()}, {x})[0]);
      }
      const std::vector<Value*> upto = warp_scan(b_, t_, st, {run.back()}, lane32);
      // What comes before this warp's elements: the carry, and in a block the warps before.
      std::vector<Value*> base = {carried};
      std::vector<Value*> step_total;  // the whole step's elements combined
      if (block.scratch) {
        BlockScan across = block_scan(b_, t_, st, upto, lane32, block.warp, block.scratch,
                                      block.type, block.warps);
        base = st.combine(base, across.before);
        step_total = std::move(across.total);
      }
      if (run.size() == 1) {
        so_far.push_back(st.combine(base, upto)[0]);
      } else {
        const std::vector<Value*> before =
            st.combine(base, warp_exclusive(b_, t_, st, upto, lane32));
        for (Value* r : run) so_far.push_back(st.combine(before, {r})[0]);
      }
      if (step_total.empty())
        step_total = warp_broadcast(b_, t_, upto, b_.getInt32(t_.warp_width() - 1));
      b_.CreateStore(st.combine({carried}, step_total)[0], carry);
    }
    for (size_t j = 0; j < lanes.size(); ++j) {
      Value* v = st.result({so_far[j]});
      lanes[j].values[op.id] =
          kir::is_float(op.dtype) ? v : b_.CreateIntCast(v, e.register_type(op.dtype), true);
    }
  }

  void reduction(ValueEmitter& e) {
    kir_support::RowPlan plan = kir_support::plan_rows(k_, 0);
    if (plan.passes.size() == 1 && plan.passes[0].in_order) return scan_rows(e, plan);
    const int64_t rows = product(k_.ranges), n = product(k_.reduction_ranges);
    // Column mode: a warp of neighbouring rows per block, a row's parts a warp apart
    // (launch_shape.h); its combine keeps every thread's state in shared memory.
    const unsigned warp = t_.warp_width();
    const bool columns = column_rows(k_, c_, warp);
    // A row per thread (very short rows), per warp (short rows) or per block: `lane` is this
    // thread's place in its row.
    const unsigned per_row = columns ? c_.block_size / warp : row_threads(k_, c_, warp);
    const unsigned block_rows = rows_per_block(k_, c_, warp);
    Value* tid = t_.thread_id(b_);
    Value* lane = i64(columns ? b_.CreateUDiv(tid, b_.getInt32(warp))
                              : b_.CreateURem(tid, b_.getInt32(per_row)));
    Value* slot = i64(columns ? b_.CreateURem(tid, b_.getInt32(warp))
                              : b_.CreateUDiv(tid, b_.getInt32(per_row)));
    lane_ = lane;
    const int64_t run_width = row_vector(plan);
    const int64_t vector = all_passes_run(plan) ? run_width : 1;
    const int64_t per_thread = persistent_elements(plan, per_row, vector);
    // Rows kept in registers do not fold: there the extra walk costs no memory, and the fold
    // would take each exp twice.
    const std::map<int, const kir::Op*> online =
        per_thread > 0 ? std::map<int, const kir::Op*>{} : fold_online_softmax(k_, plan);
    auto kind_of = [&](const kir::Op* r) {
      return online.count(r->id) ? std::string(kOnlineSoftmax) : r->name;
    };
    // Shared memory for the combine: the widest state's fields per warp (per thread in
    // column mode).
    size_t fields = 1;
    for (const auto& pass : plan.passes)
      for (const kir::Op* r : pass.reduces) fields = std::max(fields, state_fields(kind_of(r)));
    auto* scratch_type =
        llvm::ArrayType::get(b_.getInt64Ty(), fields * (columns ? c_.block_size : 32));
    auto* scratch =
        new llvm::GlobalVariable(m_, scratch_type, false, llvm::GlobalValue::InternalLinkage,
                                 llvm::UndefValue::get(scratch_type), k_.name + "_scratch", nullptr,
                                 llvm::GlobalValue::NotThreadLocal, t_.shared_space());
    scratch->setAlignment(llvm::Align(8));
    Value* first_group = b_.CreateMul(i64(t_.block_id(b_)), size(block_rows));
    Value* row_step = b_.CreateMul(i64(t_.grid_dim(b_)), size(block_rows));
    auto row_body = [&](Value* row) {
      Scope rs;
      unflatten(b_, k_.ranges, "x", row, rs);
      std::map<int, std::vector<Value*>> states;
      std::map<int, ReduceState> kinds;
      for (const kir::Op* op : plan.stages[0]) row_op(e, *op, rs, states, kinds);
      // Persistent rows: this thread's elements of the row, one scope each, kept across
      // passes so that loads and per-element values are computed once (registers, not a
      // second walk through memory).
      std::vector<Scope> kept;
      std::vector<Value*> kept_positions;
      // The last step's runs lie past the row's end in some threads when the runs do not deal
      // evenly: those threads compute the row's first run again (loads and index checks stay
      // in bounds), accumulate nothing and store nothing.
      Value* tail = nullptr;
      size_t tail_from = 0;
      if (per_thread > 0) {
        const int64_t runs = n / vector, steps = per_thread / vector;
        const std::string last = "r" + std::to_string(k_.reduction_ranges.size() - 1);
        for (int64_t q = 0; q < steps; ++q) {
          Value* run = b_.CreateAdd(lane, size(q * per_row));
          if (q == steps - 1 && runs % per_row != 0) {
            tail = b_.CreateICmpULT(run, size(runs));
            tail_from = kept.size();
            run = b_.CreateSelect(tail, run, size(0));
          }
          Value* start = b_.CreateMul(run, size(vector));
          Scope first = rs;
          unflatten(b_, k_.reduction_ranges, "r", start, first);
          std::vector<Scope> lanes =
              vector > 1 ? run_lanes(first, last, vector) : std::vector<Scope>{first};
          for (int64_t j = 0; j < vector; ++j) {
            kept.push_back(std::move(lanes[static_cast<size_t>(j)]));
            kept_positions.push_back(b_.CreateZExt(b_.CreateAdd(start, size(j)), b_.getInt64Ty()));
          }
        }
      }
      for (size_t p = 0; p < plan.passes.size(); ++p) {
        const kir_support::RowPass& pass = plan.passes[p];
        // Runs of kVector contiguous elements per thread and step when the row allows: one
        // 16-byte access per operand, and kVector independent accumulators (shorter chains).
        const bool runs = per_thread > 0 ? vector > 1 : row_runs(pass);
        // Otherwise a thread walking the row from memory takes `strided` elements per step,
        // a step of the row's threads apart (each warp's loads stay contiguous): their loads
        // are all issued before the first is needed.
        const int64_t strided = per_thread > 0 || runs ? 1 : strided_lanes(pass, n, per_row);
        const size_t width = static_cast<size_t>(runs ? run_width : strided);
        // acc[reduce][lane of the run][field]
        std::vector<std::vector<std::vector<llvm::AllocaInst*>>> acc;
        for (const kir::Op* r : pass.reduces) {
          const kir::DType operand = e.dtype_of(r->args.at(0));
          llvm::Type* type = e.register_type(operand);
          const bool folded = online.count(r->id) > 0;
          kinds.emplace(r->id,
                        ReduceState(b_, kind_of(r), operand, type,
                                    folded ? t_.math(m_, "exp", type) : llvm::FunctionCallee{},
                                    folded ? t_.fast_exp2(m_) : llvm::FunctionCallee{}));
          const ReduceState& st = kinds.at(r->id);
          const auto init = st.identity();
          std::vector<std::vector<llvm::AllocaInst*>> per_lane(width);
          for (auto& slots : per_lane) {
            for (size_t f = 0; f < st.fields(); ++f) {
              slots.push_back(e.slot(st.types()[f], "acc"));
              b_.CreateStore(init[f], slots.back());
            }
          }
          acc.push_back(std::move(per_lane));
        }
        // f32 elements divided by their row's softmax sum multiply by its reciprocal, taken
        // once per row: a correctly rounded division per element cost more than the rest of
        // the normalize (within 1.5 ulp of the quotient, the sum being at least 1; a row of
        // -inf or NaN stays NaN). Other divisors keep the division (a tiny one's reciprocal
        // would overflow).
        std::map<int, Value*> reciprocals;
        for (const kir::Op* op : pass.ops)
          if (op->kind == kir::OpKind::Math && op->name == "div" && op->dtype == kir::DType::F32 &&
              e.dtype_of(op->args.at(0)) == kir::DType::F32 && rs.values.count(op->args.at(1)) &&
              e.dtype_of(op->args[1]) == kir::DType::F32 && softmax_sum(k_, k_.op(op->args[1])).max)
            reciprocals[op->id] = b_.CreateFDiv(llvm::ConstantFP::get(b_.getFloatTy(), 1.0),
                                                rs.values.at(op->args[1]));
        // Every op of the pass for the elements of `lanes` (op by op across them); a value a
        // kept scope already holds (an earlier pass computed it) is not computed again.
        // Lanes from `masked_from` on count only where `masked` holds.
        auto walk = [&](std::vector<Scope>& lanes, const std::vector<Value*>& positions,
                        Value* masked = nullptr, size_t masked_from = 0) {
          for (const kir::Op* op : pass.ops) {
            if (auto r = reciprocals.find(op->id); r != reciprocals.end()) {
              for (Scope& s : lanes)
                if (!s.values.count(op->id))
                  s.values[op->id] = b_.CreateFMul(s.values.at(op->args.at(0)), r->second);
              continue;
            }
            if (op->kind == kir::OpKind::Store && masked) {
              for (size_t j = 0; j < masked_from; ++j) e.emit(*op, lanes[j]);
              // One branch for the masked run: its stores stay side by side (one access).
              branch_if(masked, "tail_store", "tail_stored", [&] {
                for (size_t j = masked_from; j < lanes.size(); ++j) e.emit(*op, lanes[j]);
              });
              continue;
            }
            if (op->kind == kir::OpKind::Reduce && op->name == "welford" && per_thread > 0) {
              size_t which = 0;
              while (pass.reduces[which] != op) ++which;
              std::vector<Value*> values;
              for (const Scope& s : lanes) values.push_back(s.values.at(op->args.at(0)));
              const auto state =
                  welford_of(b_, values, masked, masked_from, kinds.at(op->id).types()[0]);
              for (size_t f = 0; f < state.size(); ++f) b_.CreateStore(state[f], acc[which][0][f]);
              continue;
            }
            // An f32 online softmax folds a strided step's elements into one state at once.
            if (op->kind == kir::OpKind::Reduce && strided > 1 && !masked && lanes.size() > 1 &&
                kinds.at(op->id).takes_runs()) {
              size_t which = 0;
              while (pass.reduces[which] != op) ++which;
              const ReduceState& st = kinds.at(op->id);
              std::vector<Value*> cur, values;
              for (size_t f = 0; f < st.fields(); ++f)
                cur.push_back(b_.CreateLoad(st.types()[f], acc[which][0][f]));
              for (const Scope& s : lanes) values.push_back(s.values.at(op->args.at(0)));
              const auto next = st.accumulate_run(cur, values);
              for (size_t f = 0; f < st.fields(); ++f) b_.CreateStore(next[f], acc[which][0][f]);
              continue;
            }
            for (size_t j = 0; j < lanes.size(); ++j) {
              Scope& s = lanes[j];
              if (op->kind != kir::OpKind::Reduce) {
                if (op->kind == kir::OpKind::Store || !s.values.count(op->id)) e.emit(*op, s);
                continue;
              }
              size_t which = 0;
              while (pass.reduces[which] != op) ++which;
              const ReduceState& st = kinds.at(op->id);
              std::vector<Value*> cur;
              for (size_t f = 0; f < st.fields(); ++f)
                cur.push_back(b_.CreateLoad(st.types()[f], acc[which][j % width][f]));
              const auto next = st.accumulate(cur, s.values.at(op->args.at(0)), positions[j]);
              for (size_t f = 0; f < st.fields(); ++f)
                b_.CreateStore(
                    masked && j >= masked_from ? b_.CreateSelect(masked, next[f], cur[f]) : next[f],
                    acc[which][j % width][f]);
            }
          }
        };
        const std::string name = "pass" + std::to_string(p);
        if (per_thread > 0) {
          for (Scope& s : kept) s.values.insert(rs.values.begin(), rs.values.end());
          walk(kept, kept_positions, tail, tail_from);
        } else if (!pass.ops.empty() && runs) {
          const std::string last = "r" + std::to_string(k_.reduction_ranges.size() - 1);
          const int64_t run = static_cast<int64_t>(width);
          counted_loop(e, lane, size(n / run), size(per_row), name, [&](Value* q) {
            Value* start = b_.CreateMul(q, size(run));
            Scope first = rs;
            unflatten(b_, k_.reduction_ranges, "r", start, first);
            std::vector<Scope> lanes = run_lanes(first, last, run);
            std::vector<Value*> positions;
            for (int64_t j = 0; j < run; ++j)
              positions.push_back(b_.CreateZExt(b_.CreateAdd(start, size(j)), b_.getInt64Ty()));
            walk(lanes, positions);
          });
        } else if (!pass.ops.empty()) {
          Value* rest = lane;
          if (strided > 1) {
            const int64_t apart = static_cast<int64_t>(per_row);
            rest = counted_loop(e, lane, size(n - (strided - 1) * apart), size(strided * apart),
                                name + "_strided", [&](Value* q) {
                                  std::vector<Scope> lanes(static_cast<size_t>(strided), rs);
                                  std::vector<Value*> positions;
                                  for (int64_t j = 0; j < strided; ++j) {
                                    Value* r = b_.CreateAdd(q, size(j * apart));
                                    unflatten(b_, k_.reduction_ranges, "r", r,
                                              lanes[static_cast<size_t>(j)]);
                                    positions.push_back(b_.CreateZExt(r, b_.getInt64Ty()));
                                  }
                                  walk(lanes, positions);
                                });
          }
          counted_loop(e, rest, size(n), size(per_row), name, [&](Value* r) {
            std::vector<Scope> lanes(1, rs);
            unflatten(b_, k_.reduction_ranges, "r", r, lanes[0]);
            walk(lanes, {b_.CreateZExt(r, b_.getInt64Ty())});
          });
        }
        for (size_t i = 0; i < pass.reduces.size(); ++i) {
          const kir::Op* r = pass.reduces[i];
          const ReduceState& st = kinds.at(r->id);
          std::vector<Value*> cur;
          for (size_t j = 0; j < width; ++j) {
            std::vector<Value*> part;
            for (size_t f = 0; f < st.fields(); ++f)
              part.push_back(b_.CreateLoad(st.types()[f], acc[i][j][f]));
            cur = j == 0 ? part : st.combine(cur, part);
          }
          // A row of its own thread needs no combining across threads.
          states[r->id] =
              per_row == 1 ? cur
              : columns
                  ? column_reduce(b_, t_, st, cur, scratch, scratch_type, per_row, c_.block_size)
                  : block_reduce(b_, t_, st, cur, scratch, scratch_type, per_row / warp);
          if (auto sum = online.find(r->id); sum != online.end())
            rs.values[sum->second->id] = st.component(states[r->id], 1);
          Value* v = st.result(states[r->id]);
          rs.values[r->id] = kir::is_float(r->dtype) || r->name == "welford"
                                 ? v
                                 : b_.CreateIntCast(v, e.register_type(r->dtype), true);
        }
        for (const kir::Op* op : plan.stages[p + 1]) row_op(e, *op, rs, states, kinds);
      }
    };
    if (!columns) {
      counted_loop(e, b_.CreateAdd(first_group, slot), size(rows), row_step, "row", row_body);
      return;
    }
    // The block walks groups of a warp of rows together (its barriers need every thread):
    // a slot past the last row computes the last row again and stores nothing.
    counted_loop(e, first_group, size(rows), row_step, "rows", [&](Value* group) {
      Value* row = b_.CreateAdd(group, slot);
      row_valid_ = b_.CreateICmpULT(row, size(rows));
      row_body(b_.CreateSelect(row_valid_, row, size(rows - 1)));
      row_valid_ = nullptr;
    });
  }

  llvm::Module& m_;
  const GpuTarget& t_;
  const kir::Kernel& k_;
  const TuningConfig& c_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::IntegerType* index_ = nullptr;
  Value* lane_ = nullptr;       // reductions: this thread's place among its row's threads
  Value* row_valid_ = nullptr;  // column mode: whether this thread's row exists
};

}  // namespace

llvm::Function* emit_kernel(llvm::Module& m, const GpuTarget& target, const kir::Kernel& k,
                            const TuningConfig& config) {
  if (k.kind != "pointwise" && k.kind != "reduction")
    throw std::runtime_error("kernel " + k.name + ": " + k.kind + " kernels are not generated");
  if (config.block_size % target.warp_width() != 0 || config.block_size > 32 * target.warp_width())
    throw std::runtime_error("block size must be a multiple of the warp width, at most 32 warps");
  try {
    return KernelEmitter(m, target, k, config).emit();
  } catch (const std::exception& ex) {
    throw std::runtime_error("kernel " + k.name + ": " + ex.what());
  }
}

}  // namespace kiln::gpu
