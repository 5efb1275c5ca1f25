// The ptx plugin's externs: "mm" and "bmm" through cuBLAS, "conv2d" and its backward calls
// through cuDNN (each when its library opened), for the dtypes the library has, "attention"
// as a kernel of its own (ptx_attention.cpp), and "conv2d" as one too where cuDNN did not
// open (ptx_conv_kernel.cpp); the core
// generates kernels for the rest. Both libraries run on the stream a call is given (so a
// capture records them); a call that must allocate (cuDNN's workspace growing) is not captured.
#include <functional>
#include <kiln/plugin.hpp>

#include "plugins/kir_support/aligned_row_groups.h"
#include "plugins/kir_support/conv_call.h"
#include "plugins/kir_support/matmul_call.h"
#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {
namespace {

using kiln::sdk::Failure;
using kiln::sdk::guard;

kiln_error* extern_names(kiln_plugin* p, kiln_blob** names) {
  return guard([&] {
    std::string text;
    {
      std::lock_guard lock(p->cublas_mutex);
      for (const std::string& line : p->matmul_library().extern_lines()) text += line + "\n";
    }
    {
      std::lock_guard lock(p->cudnn_mutex);
      for (const std::string& line : p->conv_library().extern_lines()) text += line + "\n";
      if (offers_conv_kernel(*p)) text += conv_kernel_extern_line() + "\n";
    }
    if (offers_attention(*p))
      text += std::string("attention f16 bf16") + (p->attention_out_strides ? " out_strides" : "") +
              "\n";
    *names = kiln::sdk::make_blob(std::move(text));
  });
}

// cuBLAS runs its fast kernels only on rows that start 16 bytes apart: with GPT-2's 50257-word
// head in bf16 it ran an align-1 kernel taking 7.6x the time. A product of at least
// `from` multiply-adds (the `pad_rows_from` option) whose output rows are not so, and which
// has at least 16 bytes of columns, goes to rows padded to 16 bytes in scratch memory, then
// one 2-D copy puts them in place. The copy moves 4 bytes per bf16 output element: it pays on
// such heads (on the H200: 6.67 ms -> 0.87 + 0.71 ms). On ResNet-50 bf16, whose 1x1
// convolutions at 14x14 and 7x7 (n = 196, 49) are at most 0.8G multiply-adds, a run without
// padding took 1.64 ms of GPU time per call and runs padding them 1.83-1.88 (with the cuDNN
// engine timing too, so padding was not measured alone): the default 2^32 leaves them as
// they are.
// Returns the padded row's elements, or 0 to leave the product as it is.
int64_t padded_output_row(const kir_support::MatmulCall& c, int64_t from) {
  const int64_t per_16_bytes = 16 / kir::dtype_size(c.dtype);
  if (per_16_bytes < 2 || c.n < per_16_bytes || c.n % per_16_bytes == 0 || c.batch * c.m < 2)
    return 0;
  const double products = static_cast<double>(c.batch) * static_cast<double>(c.m) *
                          static_cast<double>(c.n) * static_cast<double>(c.k);
  if (products < static_cast<double>(from)) return 0;
  return (c.n + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
}

// Output elements of each row set from which `unaligned_rows: auto` takes row sets over
// padded rows. On an H100 (bench/results/2026-12-07-unaligned-row-groups), row sets of 51M
// elements (GPT-2's head at batch 8: 1.05 ms against 1.71 padded), 25M (the same in f32:
// 3.24 against 3.64) and 16M (a 32001-word head: 1.54 against 1.73) were faster; sets of
// 6.4M (that head at batch 1: 0.30 against 0.23) and 2M (1001 columns: 0.16 against 0.12)
// slower: ten launches and thinner products.
constexpr int64_t kRowSetOutputsFrom = int64_t{1} << 23;

// Runs such a call as aligned row sets and two narrow edge products written in place
// (aligned_row_groups.h): no scratch memory and no copy. False, having run nothing, where the
// split does not apply or does not pay (`unaligned_rows`). Under cublas_mutex.
bool matmul_in_row_groups(kiln_plugin& p, uint32_t device, const kir_support::MatmulCall& call,
                          const kiln_launch_args& args, CUstream stream) {
  using Mode = kiln_plugin::UnalignedRows;
  if (p.unaligned_rows == Mode::Padded || args.buffers[0] % 16 || args.buffers[1] % 16 ||
      args.buffers[2] % 16)
    return false;
  const std::vector<kir_support::MatmulPiece> pieces = kir_support::aligned_row_groups(call);
  if (p.unaligned_rows == Mode::Auto) {
    for (const kir_support::MatmulPiece& piece : pieces)
      if (piece.aligned && piece.call.m * piece.call.n < kRowSetOutputsFrom) return false;
  }
  const int64_t size = kir::dtype_size(call.dtype);
  for (const kir_support::MatmulPiece& piece : pieces) {
    p.cublas.matmul(device, piece.call, args.buffers[0], args.buffers[1],
                    args.buffers[2] + static_cast<CUdeviceptr>(piece.out_offset * size), stream,
                    piece.out_row);
  }
  return !pieces.empty();
}

// Runs `call` on padded rows (padded_output_row) and copies them in place, or in row groups
// (matmul_in_row_groups). False, having run nothing, when the call is not one to pad or
// no scratch memory can be had for it: then it runs as it is. Under cublas_mutex.
bool padded_matmul(kiln_plugin& p, uint32_t device, const kir_support::MatmulCall& call,
                   const kiln_launch_args& args, CUstream stream, const std::string& name) {
  const int64_t padded_row = padded_output_row(call, p.pad_rows_from);
  if (!padded_row) return false;
  if (matmul_in_row_groups(p, device, call, args, stream)) return true;
  if (!p.cuda.cuMemcpy2DAsync) return false;
  const int64_t size = kir::dtype_size(call.dtype), per_16_bytes = 16 / size;
  CUdeviceptr rows_at = 0;
  try {
    rows_at = p.cublas_scratch.get(p, device,
                                   static_cast<size_t>(call.batch * call.m * padded_row * size),
                                   args.stream, "extern " + name);
  } catch (const Failure& f) {
    if (f.code() == KILN_STATUS_UNSUPPORTED) throw;  // growing while a stream captures
    return false;
  }
  // The columns up to the last whole 16 bytes, then the few left as a second product beside
  // them: cuBLAS takes its aligned kernels only for a column count of whole 16 bytes too.
  kir_support::MatmulCall main = call, rest = call;
  main.n = call.n / per_16_bytes * per_16_bytes;
  rest.n = call.n - main.n;
  rest.b.offset += main.n * call.b.col;
  p.cublas.matmul(device, main, args.buffers[0], args.buffers[1], rows_at, stream, padded_row);
  p.cublas.matmul(device, rest, args.buffers[0], args.buffers[1],
                  rows_at + static_cast<CUdeviceptr>(main.n * size), stream, padded_row);
  Memcpy2D rows;
  rows.srcMemoryType = rows.dstMemoryType = kMemoryTypeDevice;
  rows.srcDevice = rows_at;
  rows.srcPitch = static_cast<size_t>(padded_row * size);
  rows.dstDevice = args.buffers[2];
  rows.dstPitch = rows.WidthInBytes = static_cast<size_t>(call.n * size);
  rows.Height = static_cast<size_t>(call.batch * call.m);
  p.check(p.cuda.cuMemcpy2DAsync(&rows, stream), name + ": cuMemcpy2DAsync");
  return true;
}

void matmul_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
                 const std::string& name) {
  {
    std::lock_guard lock(p->cublas_mutex);
    if (!p->matmul_library().available())
      throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  }
  const kir_support::MatmulCall call = p->memory.checked_matmul_call(device, args, name);
  const std::vector<int64_t> bytes = call.buffer_bytes();
  p->use(device);
  if (call.k == 0 || !p->cublas.takes_streams())
    refuse_in_capture(args.stream, "extern " + name + " (on the legacy default stream)");
  if (call.k == 0) {  // an empty sum: zeros
    if (bytes[2] > 0)
      p->check(p->cuda.cuMemsetD8(args.buffers[2], 0, static_cast<size_t>(bytes[2])),
               name + ": cuMemsetD8");
    return;
  }
  std::lock_guard lock(p->cublas_mutex);
  const CUstream stream = driver_stream(*p, args.stream);
  try {
    if (!padded_matmul(*p, device, call, args, stream, name))
      p->cublas.matmul(device, call, args.buffers[0], args.buffers[1], args.buffers[2], stream);
  } catch (const std::runtime_error& e) {
    throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": " + e.what());
  }
}

// An event for timing, destroyed with this.
struct TimingEvent {
  TimingEvent(const kiln_plugin& plugin, const std::string& what) : p(plugin) {
    p.check(p.cuda.cuEventCreate(&event, 0), what + ": cuEventCreate");
  }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
  ~TimingEvent() {
    if (event) p.cuda.cuEventDestroy(event);
  }
  const kiln_plugin& p;
  CUevent event = nullptr;
};

void conv_call(kiln_plugin* p, uint32_t device, const kiln_launch_args& args,
               kir_support::ConvDirection direction, const std::string& name) {
  std::unique_lock lock(p->cudnn_mutex);
  if (!p->conv_library().available()) {
    // Without cuDNN the forward call is the plugin's own kernel where it offers one.
    const bool own = direction == kir_support::ConvDirection::Forward && offers_conv_kernel(*p);
    lock.unlock();
    if (own) return conv_kernel_call(p, device, args, name);
    throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  }
  if (!p->cudnn.takes_streams())
    refuse_in_capture(args.stream, "extern " + name + " (on the legacy default stream)");
  kir_support::ConvCall call;
  try {
    call = kir_support::read_conv_call(args);
  } catch (const std::invalid_argument& e) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": " + e.what());
  }
  p->memory.check_buffers(device, args.buffers, args.num_buffers, call.buffer_bytes(direction),
                          name);
  p->use(device);
  auto workspace = [&](size_t bytes) {
    return p->cudnn_workspace.get(*p, device, bytes, args.stream, "extern " + name);
  };
  const CUstream stream = driver_stream(*p, args.stream);
  // Times work on the call's stream between two events (never while capturing: nothing runs).
  auto time_ms = [&](const std::function<void()>& work) {
    const TimingEvent start(*p, name), end(*p, name);
    p->check(p->cuda.cuEventRecord(start.event, stream), name + ": cuEventRecord");
    work();
    p->check(p->cuda.cuEventRecord(end.event, stream), name + ": cuEventRecord");
    p->check(p->cuda.cuEventSynchronize(end.event), name + ": cuEventSynchronize");
    float ms = 0;
    p->check(p->cuda.cuEventElapsedTime(&ms, start.event, end.event),
             name + ": cuEventElapsedTime");
    return ms;
  };
  // Engines are not timed while a stream captures (nothing runs) nor under the `deterministic`
  // option (the heuristic's first engine: the same every run).
  const bool timed = !(args.stream && args.stream->capturing) && !p->deterministic;
  try {
    p->cudnn.run(direction, device, call, args.buffers[0], args.buffers[1], args.buffers[2],
                 workspace, stream, timed ? CudnnGraph::Timer(time_ms) : CudnnGraph::Timer());
  } catch (const std::runtime_error& e) {
    throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": " + e.what());
  }
}

kiln_error* extern_call(kiln_plugin* p, uint32_t device, const kiln_launch_args* args_in) {
  return guard([&] {
    const auto args = kiln::sdk::read_struct(args_in);
    const std::string name = args.kernel ? args.kernel : "";
    if (name == "mm" || name == "bmm") return matmul_call(p, device, args, name);
    if (name == "attention") return attention_call(p, device, args, name);
    if (const auto direction = kir_support::conv_direction(name))
      return conv_call(p, device, args, *direction, name);
    throw Failure(KILN_STATUS_UNIMPLEMENTED, "no extern '" + name + "'");
  });
}

}  // namespace

void add_extern_functions(kiln_plugin_api& api) {
  api.extern_names = extern_names;
  api.extern_call = extern_call;
}

}  // namespace kiln::ptx
