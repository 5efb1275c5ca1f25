#include "plugins/ptx/cudnn_graph.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "plugins/ptx/cudnn_types.h"

namespace kiln::ptx {
namespace {

// Values of cuDNN's backend enums (cudnn_graph.h, stable across cuDNN 9).
enum DescriptorType {
  kConvolutionDesc = 1,
  kEngineDesc = 2,
  kEngineConfigDesc = 3,
  kHeuristicsDesc = 4,
  kExecutionPlanDesc = 5,
  kConvForwardDesc = 10,
  kOperationGraphDesc = 15,
  kVariantPackDesc = 16,
  kTensorDesc = 17,
};
enum AttributeType {
  kHandleType = 0,
  kDataTypeType = 1,
  kInt64Type = 3,
  kFloatType = 4,
  kVoidPtrType = 6,
  kConvModeType = 7,
  kHeurModeType = 8,
  kNumericalNoteType = 11,
  kDescriptorType = 15,
};
enum Attribute {
  kConvCompType = 100,
  kConvMode = 101,
  kConvDilations = 102,
  kConvStrides = 103,
  kConvPostPadding = 104,
  kConvPrePadding = 105,
  kConvSpatialDims = 106,
  kHeurMode = 200,
  kHeurGraph = 201,
  kHeurResults = 202,
  kConfigEngine = 300,
  kPlanHandle = 400,
  kPlanConfig = 401,
  kPlanWorkspace = 402,
  kForwardAlpha = 700,
  kForwardBeta = 701,
  kForwardConv = 702,
  kForwardW = 703,
  kForwardX = 704,
  kForwardY = 705,
  kGraphHandle = 800,
  kGraphOps = 801,
  kTensorAlignment = 900,
  kTensorDataType = 901,
  kTensorDims = 902,
  kTensorStrides = 903,
  kTensorId = 906,
  kPackIds = 1000,
  kPackPointers = 1001,
  kPackWorkspace = 1003,
  kEngineNotes = 1303,
};
constexpr int kCrossCorrelation = 1;
constexpr int kHeurModeA = 3;
// Numerical notes that change what a convolution computes: tensor cores on f32 data (TF32
// products), inputs converted down, sums kept in half precision.
constexpr int kTensorCoreNote = 0, kDownConvertNote = 1, kReducedReductionNote = 2;
constexpr int kMaxConfigs = 16;
constexpr size_t kTimedEngines = 6;  // engines timed per new call shape, given a timer

int64_t alignment_of(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  int64_t a = 16;
  while (a > 1 && v % static_cast<uintptr_t>(a) != 0) a /= 2;
  return a;
}

}  // namespace

// Descriptors destroyed together, the last made first.
struct CudnnGraph::Owned {
  const CudnnGraph& api;
  std::vector<Desc> descs;
  explicit Owned(const CudnnGraph& a) : api(a) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    for (auto it = descs.rbegin(); it != descs.rend(); ++it) api.destroy_(*it);
  }
  Desc own(Desc d) {
    descs.push_back(d);
    return d;
  }
};

// An execution plan and every descriptor it was built from (shared with the plans of the
// other engines built for the same call: they go together once none is used).
struct CudnnGraph::Plan {
  std::shared_ptr<Owned> owned;
  Desc plan = nullptr;
  int64_t workspace = 0;
};

bool CudnnGraph::bind(const kir_support::DynamicLibrary& l) {
  const bool all =
      l.symbol("cudnnBackendCreateDescriptor", create_) &&
      l.symbol("cudnnBackendDestroyDescriptor", destroy_) &&
      l.symbol("cudnnBackendSetAttribute", set_) && l.symbol("cudnnBackendGetAttribute", get_) &&
      l.symbol("cudnnBackendFinalize", finalize_) &&
      l.symbol("cudnnGetErrorString", error_string_) && l.symbol("cudnnBackendExecute", execute_);
  if (!all) execute_ = nullptr;
  return all;
}

void CudnnGraph::release() {
  plans_.clear();
}

void CudnnGraph::check(int status, const char* what) const {
  if (status != 0)
    throw std::runtime_error(std::string(what) + " failed: " + error_string_(status));
}

CudnnGraph::Desc CudnnGraph::make(int type) const {
  Desc d = nullptr;
  check(create_(type, &d), "cudnnBackendCreateDescriptor");
  return d;
}

void CudnnGraph::set(Desc d, int name, int type, int64_t count, const void* values) const {
  check(set_(d, name, type, count, values), "cudnnBackendSetAttribute");
}

void CudnnGraph::finalize(Desc d, const char* what) const {
  check(finalize_(d), what);
}

std::vector<std::shared_ptr<CudnnGraph::Plan>> CudnnGraph::build(Handle handle,
                                                                 const kir_support::ConvCall& c,
                                                                 const int64_t alignment[3],
                                                                 size_t limit) {
  auto owned = std::make_shared<Owned>(*this);
  Owned* const p = owned.get();
  const int type = cudnn_data_type(c.dtype);
  const int64_t cg = c.c / c.groups;
  const auto tensor = [&](int64_t id, std::vector<int64_t> dims, std::vector<int64_t> strides) {
    Desc t = p->own(make(kTensorDesc));
    set(t, kTensorDataType, kDataTypeType, 1, &type);
    set(t, kTensorDims, kInt64Type, 4, dims.data());
    set(t, kTensorStrides, kInt64Type, 4, strides.data());
    set(t, kTensorId, kInt64Type, 1, &id);
    set(t, kTensorAlignment, kInt64Type, 1, &alignment[id]);
    finalize(t, "cudnnBackendFinalize (tensor)");
    return t;
  };
  Desc x =
      tensor(0, {c.n, c.c, c.h, c.w}, {c.x_stride[0], c.x_stride[1], c.x_stride[2], c.x_stride[3]});
  Desc w =
      tensor(1, {c.k, cg, c.r, c.s}, {c.w_stride[0], c.w_stride[1], c.w_stride[2], c.w_stride[3]});
  Desc y = tensor(2, {c.n, c.k, c.out_h, c.out_w},
                  {c.y_stride[0], c.y_stride[1], c.y_stride[2], c.y_stride[3]});

  Desc conv = p->own(make(kConvolutionDesc));
  const int64_t dims = 2, pads[2] = {c.pad_h, c.pad_w}, strides[2] = {c.stride_h, c.stride_w},
                dilations[2] = {c.dil_h, c.dil_w};
  set(conv, kConvCompType, kDataTypeType, 1, &kCudnnFloat);
  set(conv, kConvMode, kConvModeType, 1, &kCrossCorrelation);
  set(conv, kConvSpatialDims, kInt64Type, 1, &dims);
  set(conv, kConvPrePadding, kInt64Type, 2, pads);
  set(conv, kConvPostPadding, kInt64Type, 2, pads);
  set(conv, kConvStrides, kInt64Type, 2, strides);
  set(conv, kConvDilations, kInt64Type, 2, dilations);
  finalize(conv, "cudnnBackendFinalize (convolution)");

  // Groups are the weight's channel count against x's.
  Desc op = p->own(make(kConvForwardDesc));
  const float one = 1.0f, zero = 0.0f;
  set(op, kForwardX, kDescriptorType, 1, &x);
  set(op, kForwardW, kDescriptorType, 1, &w);
  set(op, kForwardY, kDescriptorType, 1, &y);
  set(op, kForwardConv, kDescriptorType, 1, &conv);
  set(op, kForwardAlpha, kFloatType, 1, &one);
  set(op, kForwardBeta, kFloatType, 1, &zero);
  finalize(op, "cudnnBackendFinalize (convolution forward)");

  Desc graph = p->own(make(kOperationGraphDesc));
  set(graph, kGraphHandle, kHandleType, 1, &handle);
  set(graph, kGraphOps, kDescriptorType, 1, &op);
  finalize(graph, "cudnnBackendFinalize (operation graph)");

  Desc heuristics = p->own(make(kHeuristicsDesc));
  set(heuristics, kHeurGraph, kDescriptorType, 1, &graph);
  set(heuristics, kHeurMode, kHeurModeType, 1, &kHeurModeA);
  finalize(heuristics, "cudnnBackendFinalize (engine heuristics)");
  std::vector<Desc> configs(kMaxConfigs);
  for (Desc& cfg : configs) cfg = p->own(make(kEngineConfigDesc));
  int64_t returned = 0;
  check(get_(heuristics, kHeurResults, kDescriptorType, kMaxConfigs, &returned, configs.data()),
        "cudnnBackendGetAttribute (engine heuristics' results)");

  const bool exact_f32 = c.dtype == kir::DType::F32 && !c.tf32;
  std::vector<std::shared_ptr<Plan>> plans;
  for (int64_t i = 0; i < returned && i < kMaxConfigs; ++i) {
    Desc engine = p->own(make(kEngineDesc));
    int64_t one_engine = 0;
    if (get_(configs[i], kConfigEngine, kDescriptorType, 1, &one_engine, &engine) != 0) continue;
    int notes[16] = {};
    int64_t note_count = 0;
    if (get_(engine, kEngineNotes, kNumericalNoteType, 16, &note_count, notes) != 0) continue;
    bool keeps_precision = true;
    for (int64_t n = 0; n < note_count && n < 16; ++n)
      if ((exact_f32 && notes[n] == kTensorCoreNote) || notes[n] == kDownConvertNote ||
          notes[n] == kReducedReductionNote)
        keeps_precision = false;
    if (!keeps_precision) continue;
    Desc plan = make(kExecutionPlanDesc);
    set(plan, kPlanHandle, kHandleType, 1, &handle);
    set(plan, kPlanConfig, kDescriptorType, 1, &configs[i]);
    if (finalize_(plan) != 0) {  // this engine cannot run the call here: the next one
      destroy_(plan);
      continue;
    }
    p->own(plan);
    auto built = std::make_shared<Plan>(Plan{owned, plan, 0});
    int64_t count = 0;
    check(get_(plan, kPlanWorkspace, kInt64Type, 1, &count, &built->workspace),
          "cudnnBackendGetAttribute (workspace size)");
    plans.push_back(std::move(built));
    if (plans.size() >= limit) break;
  }
  return plans;
}

std::unique_ptr<CudnnGraph::Owned> CudnnGraph::variant_pack(
    const Plan& plan, void* const pointers[3],
    const std::function<CUdeviceptr(size_t)>& workspace) const {
  void* space = plan.workspace > 0
                    ? reinterpret_cast<void*>(workspace(static_cast<size_t>(plan.workspace)))
                    : nullptr;
  auto pack = std::make_unique<Owned>(*this);
  Desc d = pack->own(make(kVariantPackDesc));
  const int64_t ids[3] = {0, 1, 2};
  set(d, kPackIds, kInt64Type, 3, ids);
  set(d, kPackPointers, kVoidPtrType, 3, pointers);
  set(d, kPackWorkspace, kVoidPtrType, 1, &space);
  finalize(d, "cudnnBackendFinalize (variant pack)");
  return pack;
}

void CudnnGraph::execute(Handle handle, const Plan& plan, const Owned& pack) const {
  check(execute_(handle, plan.plan, pack.descs.front()), "cudnnBackendExecute");
}

std::shared_ptr<CudnnGraph::Plan> CudnnGraph::fastest(
    Handle handle, std::vector<std::shared_ptr<Plan>> candidates, void* const pointers[3],
    const std::function<CUdeviceptr(size_t)>& workspace, const Timer& time_ms) const {
  if (candidates.size() < 2 || !time_ms) return candidates.empty() ? nullptr : candidates[0];
  // Heuristic mode A's order is cuDNN's guess, not a measurement (cudnnFind times the legacy
  // API's algorithms for the same reason). Engines that want far more scratch than the first
  // are not tried. Each is timed over three runs queued back to back after a warm-up, its
  // variant pack made once, so the host does not sit between the runs.
  const int64_t scratch_limit = std::max<int64_t>(candidates[0]->workspace, int64_t{64} << 20);
  std::shared_ptr<Plan> best;
  float best_ms = 0;
  for (const auto& candidate : candidates) {
    if (candidate->workspace > scratch_limit) continue;
    float ms = 0;
    try {
      const auto pack = variant_pack(*candidate, pointers, workspace);
      execute(handle, *candidate, *pack);  // warm-up
      ms = time_ms([&] {
        for (int i = 0; i < 3; ++i) execute(handle, *candidate, *pack);
      });
    } catch (const std::runtime_error&) {
      continue;  // an engine that fails to run here is not a candidate
    }
    if (!best || ms < best_ms) {
      best = candidate;
      best_ms = ms;
    }
  }
  return best;
}

bool CudnnGraph::forward(Handle handle, const kir_support::ConvCall& c, void* x, void* w, void* y,
                         const std::function<CUdeviceptr(size_t)>& workspace,
                         const Timer& time_ms) {
  const int64_t alignment[3] = {alignment_of(x), alignment_of(w), alignment_of(y)};
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(handle)) + "," + c.shape_key();
  for (int64_t a : alignment) key += "," + std::to_string(a);
  void* const pointers[3] = {x, w, y};
  auto found = plans_.find(key);
  if (found == plans_.end()) {
    std::shared_ptr<Plan> chosen;
    try {
      chosen = fastest(handle, build(handle, c, alignment, time_ms ? kTimedEngines : 1), pointers,
                       workspace, time_ms);
    } catch (const std::runtime_error&) {
      // A cuDNN that refuses a step of the graph (an attribute older releases lack): the
      // legacy API serves this shape, as it does a shape no engine takes.
      chosen = nullptr;
    }
    found = plans_.emplace(key, std::move(chosen)).first;
  }
  const std::shared_ptr<Plan>& plan = found->second;
  if (!plan) return false;
  execute(handle, *plan, *variant_pack(*plan, pointers, workspace));  // the pack, per call
  return true;
}

}  // namespace kiln::ptx
