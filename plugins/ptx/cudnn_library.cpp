#include "plugins/ptx/cudnn_library.h"

#include <climits>
#include <stdexcept>
#include <utility>

#include "plugins/ptx/cudnn_types.h"
#include "plugins/ptx/handle_stream.h"

namespace kiln::ptx {
namespace {

// Values of cuDNN's enums (cudnn_graph.h, cudnn_cnn.h).
constexpr int kNchw = 0, kNhwc = 1;
constexpr int kCrossCorrelation = 1;
constexpr int kTensorOpMath = 1, kFmaMath = 3;

int narrow(int64_t v) {
  if (v > INT_MAX) throw std::runtime_error("cuDNN: a size or stride exceeds 2^31 - 1");
  return static_cast<int>(v);
}

}  // namespace

CudnnLibrary CudnnLibrary::open(const std::string& path, std::string& why) {
  CudnnLibrary lib;
  if (path == "off") {
    why = "turned off by the plugin's cudnn option";
    return lib;
  }
  lib.library_ = kir_support::DynamicLibrary::open(
      path.empty() ? std::vector<std::string>{"libcudnn.so.9", "libcudnn.so"}
                   : std::vector<std::string>{path},
      [&](const kir_support::DynamicLibrary& l) {
        if (!l.symbol("cudnnSetStream", lib.set_stream_)) lib.set_stream_ = nullptr;
        return l.symbol("cudnnCreate", lib.create_) && l.symbol("cudnnDestroy", lib.destroy_) &&
               l.symbol("cudnnGetErrorString", lib.error_string_) &&
               l.symbol("cudnnCreateTensorDescriptor", lib.create_tensor_) &&
               l.symbol("cudnnSetTensor4dDescriptorEx", lib.set_tensor_) &&
               l.symbol("cudnnDestroyTensorDescriptor", lib.destroy_tensor_) &&
               l.symbol("cudnnCreateFilterDescriptor", lib.create_filter_) &&
               l.symbol("cudnnSetFilter4dDescriptor", lib.set_filter_) &&
               l.symbol("cudnnDestroyFilterDescriptor", lib.destroy_filter_) &&
               l.symbol("cudnnCreateConvolutionDescriptor", lib.create_conv_) &&
               l.symbol("cudnnSetConvolution2dDescriptor", lib.set_conv_) &&
               l.symbol("cudnnSetConvolutionGroupCount", lib.set_groups_) &&
               l.symbol("cudnnSetConvolutionMathType", lib.set_math_) &&
               l.symbol("cudnnDestroyConvolutionDescriptor", lib.destroy_conv_) &&
               l.symbol("cudnnFindConvolutionForwardAlgorithm", lib.find_algorithm_) &&
               l.symbol("cudnnGetConvolutionForwardWorkspaceSize", lib.workspace_size_) &&
               l.symbol("cudnnConvolutionForward", lib.forward_) &&
               l.symbol("cudnnFindConvolutionBackwardDataAlgorithm", lib.find_data_algorithm_) &&
               l.symbol("cudnnGetConvolutionBackwardDataWorkspaceSize", lib.data_workspace_size_) &&
               l.symbol("cudnnConvolutionBackwardData", lib.backward_data_) &&
               l.symbol("cudnnFindConvolutionBackwardFilterAlgorithm",
                        lib.find_filter_algorithm_) &&
               l.symbol("cudnnGetConvolutionBackwardFilterWorkspaceSize",
                        lib.filter_workspace_size_) &&
               l.symbol("cudnnConvolutionBackwardFilter", lib.backward_filter_);
      },
      why);
  if (lib.library_.loaded()) lib.graph_.bind(lib.library_);
  return lib;
}

std::vector<std::string> CudnnLibrary::extern_lines() const {
  if (!available()) return {};
  std::vector<std::string> lines;
  for (const char* name : kir_support::kConvExterns)
    lines.push_back(std::string(name) + " f32 f16 bf16 tf32" +
                    (name == std::string("conv2d") ? " strides" : ""));
  return lines;
}

void CudnnLibrary::release_handles(const std::function<void(uint32_t)>& use_device) {
  graph_.release();
  for (auto& [key, p] : plans_) destroy(p);
  plans_.clear();
  for (uint32_t d = 0; d < handles_.size(); ++d) {
    if (!handles_[d]) continue;
    use_device(d);
    destroy_(handles_[d]);
    handles_[d] = nullptr;
  }
}

void CudnnLibrary::run(kir_support::ConvDirection direction, uint32_t device,
                       const kir_support::ConvCall& c, CUdeviceptr a, CUdeviceptr b,
                       CUdeviceptr out, const std::function<CUdeviceptr(size_t)>& workspace,
                       CUstream stream, const CudnnGraph::Timer& time_ms) {
  using kir_support::ConvDirection;
  const int type = cudnn_data_type(c.dtype);
  if (c.n == 0 || c.k == 0 || c.out_h == 0 || c.out_w == 0) return;
  if (handles_.size() <= device) handles_.resize(device + 1, nullptr);
  if (!handles_[device]) check(create_(&handles_[device]), "cudnnCreate");
  const HandleOnStream<Handle> on_stream(set_stream_, handles_[device], stream);
  check(on_stream.status(), "cudnnSetStream");
  // x (or dx) from the call's offset on.
  const uint64_t x_offset = static_cast<uint64_t>(c.x_offset * kir::dtype_size(c.dtype));
  auto ptr = [](CUdeviceptr v, uint64_t offset = 0) { return reinterpret_cast<void*>(v + offset); };
  if (direction == ConvDirection::Forward && graph_.bound() &&
      graph_.forward(handles_[device], c, ptr(a, x_offset), ptr(b), ptr(out), workspace, time_ms))
    return;
  const std::string key = std::to_string(device) + "," +
                          std::to_string(static_cast<int>(direction)) + "," + c.shape_key();
  auto found = plans_.find(key);
  if (found == plans_.end()) found = plans_.emplace(key, plan(direction, device, c, type)).first;
  const Plan& p = found->second;
  void* space = reinterpret_cast<void*>(p.workspace > 0 ? workspace(p.workspace) : 0);
  const float one = 1.0f, zero = 0.0f;
  switch (direction) {
    case ConvDirection::Forward:
      check(forward_(handles_[device], &one, p.x, ptr(a, x_offset), p.w, ptr(b), p.conv, p.algo,
                     space, p.workspace, &zero, p.y, ptr(out)),
            "cudnnConvolutionForward");
      return;
    case ConvDirection::BackwardInput:
      check(backward_data_(handles_[device], &one, p.w, ptr(b), p.y, ptr(a), p.conv, p.algo, space,
                           p.workspace, &zero, p.x, ptr(out, x_offset)),
            "cudnnConvolutionBackwardData");
      return;
    case ConvDirection::BackwardWeight:
      check(backward_filter_(handles_[device], &one, p.x, ptr(a, x_offset), p.y, ptr(b), p.conv,
                             p.algo, space, p.workspace, &zero, p.w, ptr(out)),
            "cudnnConvolutionBackwardFilter");
      return;
  }
}

void CudnnLibrary::check(int status, const char* what) const {
  if (status != 0)
    throw std::runtime_error(std::string(what) + " failed: " + error_string_(status));
}

CudnnLibrary::Plan CudnnLibrary::plan(kir_support::ConvDirection direction, uint32_t device,
                                      const kir_support::ConvCall& c, int type) {
  using kir_support::ConvDirection;
  Plan p;
  // Descriptors made so far go with `p` if a step fails.
  struct Undo {
    CudnnLibrary& lib;
    Plan& p;
    bool keep = false;
    ~Undo() {
      if (!keep) lib.destroy(p);
    }
  } undo{*this, p};
  check(create_tensor_(&p.x), "cudnnCreateTensorDescriptor");
  check(set_tensor_(p.x, type, narrow(c.n), narrow(c.c), narrow(c.h), narrow(c.w),
                    narrow(c.x_stride[0]), narrow(c.x_stride[1]), narrow(c.x_stride[2]),
                    narrow(c.x_stride[3])),
        "cudnnSetTensor4dDescriptorEx (input)");
  check(create_tensor_(&p.y), "cudnnCreateTensorDescriptor");
  check(set_tensor_(p.y, type, narrow(c.n), narrow(c.k), narrow(c.out_h), narrow(c.out_w),
                    narrow(c.y_stride[0]), narrow(c.y_stride[1]), narrow(c.y_stride[2]),
                    narrow(c.y_stride[3])),
        "cudnnSetTensor4dDescriptorEx (output)");
  check(create_filter_(&p.w), "cudnnCreateFilterDescriptor");
  // Filters are described by a format, not strides: packed NCHW or channels-last.
  const int64_t cg = c.c / c.groups;
  const bool nhwc = c.w_stride[1] == 1 && c.w_stride[3] == cg && c.w_stride[2] == c.s * cg &&
                    c.w_stride[0] == c.r * c.s * cg;
  const bool nchw = c.w_stride[3] == 1 && c.w_stride[2] == c.s && c.w_stride[1] == c.r * c.s &&
                    c.w_stride[0] == cg * c.r * c.s;
  if (!nhwc && !nchw)
    throw std::runtime_error("cuDNN takes a weight packed NCHW or channels-last only");
  check(set_filter_(p.w, type, nchw ? kNchw : kNhwc, narrow(c.k), narrow(cg), narrow(c.r),
                    narrow(c.s)),
        "cudnnSetFilter4dDescriptor");
  check(create_conv_(&p.conv), "cudnnCreateConvolutionDescriptor");
  check(set_conv_(p.conv, narrow(c.pad_h), narrow(c.pad_w), narrow(c.stride_h), narrow(c.stride_w),
                  narrow(c.dil_h), narrow(c.dil_w), kCrossCorrelation, kCudnnFloat),
        "cudnnSetConvolution2dDescriptor");
  check(set_groups_(p.conv, narrow(c.groups)), "cudnnSetConvolutionGroupCount");
  check(set_math_(p.conv, c.dtype == kir::DType::F32 && !c.tf32 ? kFmaMath : kTensorOpMath),
        "cudnnSetConvolutionMathType");
  // Timed once per shape (cuDNN runs each algorithm, fastest first in its answer).
  AlgoPerf perf[8] = {};
  int returned = 0;
  Handle h = handles_[device];
  if (direction == ConvDirection::Forward)
    check(find_algorithm_(h, p.x, p.w, p.conv, p.y, 8, &returned, perf),
          "cudnnFindConvolutionForwardAlgorithm");
  else if (direction == ConvDirection::BackwardInput)
    check(find_data_algorithm_(h, p.w, p.y, p.conv, p.x, 8, &returned, perf),
          "cudnnFindConvolutionBackwardDataAlgorithm");
  else
    check(find_filter_algorithm_(h, p.x, p.y, p.conv, p.w, 8, &returned, perf),
          "cudnnFindConvolutionBackwardFilterAlgorithm");
  // The gradients only from algorithms that sum exact products in f32 (no FFT or Winograd
  // transforms), and in half precision only ALGO_1: ALGO_0 (and filter's ALGO_3) add partial
  // sums into the output with atomics, which in f16/bf16 rounds every partial sum (measured on
  // the H100: bf16 gradients 10% off the rounded exact sum).
  // With the plugin's `deterministic` option, ALGO_1 alone in f32 too (ALGO_0 and filter's
  // ALGO_3 sum in an order that changes from run to run).
  const bool half = c.dtype != kir::DType::F32;
  const auto exact = [&](int algo) {
    if (direction == ConvDirection::Forward) return true;
    if (half || deterministic_) return algo == 1;
    return algo == 0 || algo == 1 || (direction == ConvDirection::BackwardWeight && algo == 3);
  };
  for (int i = 0; i < returned && p.algo < 0; ++i)
    if (perf[i].status == 0 && exact(perf[i].algo)) p.algo = perf[i].algo;
  if (p.algo < 0) throw std::runtime_error("cuDNN has no algorithm for this convolution");
  if (direction == ConvDirection::Forward)
    check(workspace_size_(h, p.x, p.w, p.conv, p.y, p.algo, &p.workspace),
          "cudnnGetConvolutionForwardWorkspaceSize");
  else if (direction == ConvDirection::BackwardInput)
    check(data_workspace_size_(h, p.w, p.y, p.conv, p.x, p.algo, &p.workspace),
          "cudnnGetConvolutionBackwardDataWorkspaceSize");
  else
    check(filter_workspace_size_(h, p.x, p.y, p.conv, p.w, p.algo, &p.workspace),
          "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  undo.keep = true;
  return p;
}

void CudnnLibrary::destroy(Plan& p) {
  if (p.x) destroy_tensor_(p.x);
  if (p.y) destroy_tensor_(p.y);
  if (p.w) destroy_filter_(p.w);
  if (p.conv) destroy_conv_(p.conv);
  p = Plan();
}

}  // namespace kiln::ptx
