// kiln-ptx-codegen: KIR (a file, or - for stdin) to the optimized LLVM IR or the PTX the ptx
// plugin generates, without a GPU; or, with --attention or --conv, the fused attention or the
// implicit-GEMM convolution kernel for one
// call; or, with --narrow, LLVM IR text through the integer narrowing that follows O3. For
// golden tests and for reading generated code.
#include <llvm/IR/LLVMContext.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "plugins/gpu/kir_input.h"
#include "plugins/gpu/narrow_wide_integers.h"
#include "plugins/ptx/conv_split.h"
#include "plugins/ptx/ptx_compiler.h"

namespace {

// A spec's "key=value" items.
struct Spec {
  explicit Spec(const std::string& text) {
    std::istringstream in(text);
    for (std::string item; in >> item;) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("expected key=value, got " + item);
      kv[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  int64_t number(const std::string& key) const {
    return kv.contains(key) ? std::stoll(kv.at(key))
                            : throw std::invalid_argument("missing " + key);
  }
  int64_t number(const std::string& key, int64_t fallback) const {
    return kv.contains(key) ? std::stoll(kv.at(key)) : fallback;
  }
  std::map<std::string, std::string> kv;
};

// "dtype=bf16 batch=2 heads=3 q_len=77 kv_len=93 head_dim=64 causal=1 mask=add": q, k and v
// contiguous, the mask [q_len, kv_len] broadcast over batch and heads, scale 1/sqrt(head_dim).
// With rows_per_warp=16|32 and keys=32|64, tiled as the plugin's options would tile it (both
// ignored for head dims over 64); by default as the plugin tiles it. heavy_first=0: a causal
// call's blocks in the plugin's `attention_order: in_order` (1, the default: heavy_first).
kiln::kir_support::AttentionCall attention_call(const std::string& text) {
  Spec spec(text);
  auto& kv = spec.kv;
  const auto number = [&](const std::string& key) { return spec.number(key); };
  kiln::kir_support::AttentionCall c;
  c.dtype = kv["dtype"] == "f16" ? kiln::kir::DType::F16 : kiln::kir::DType::BF16;
  c.batch = number("batch"), c.heads = number("heads"), c.q_len = number("q_len");
  c.kv_len = number("kv_len"), c.head_dim = number("head_dim");
  c.causal = kv["causal"] == "1";
  c.scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  for (auto [l, rows] : {std::pair{&c.q, c.q_len}, {&c.k, c.kv_len}, {&c.v, c.kv_len}})
    *l = {0, c.heads * rows * c.head_dim, rows * c.head_dim, c.head_dim, 1};
  if (kv["mask"] == "add" || kv["mask"] == "keep") {
    c.mask = kv["mask"] == "add" ? kiln::kir_support::AttentionMask::Add
                                 : kiln::kir_support::AttentionMask::Keep;
    c.mask_dtype = kv["mask"] == "add" ? c.dtype : kiln::kir::DType::Bool;
    c.mask_at = {0, 0, 0, c.kv_len, 1};
  }
  return c;
}

// "dtype=bf16|f16|f32|tf32 n=2 c=64 h=9 w=9 k=64 r=3 s=3 [stride=1 pad=0 dil=1 groups=1]
// [layout=nchw|nhwc] [tile=128x64x3] [splits=1] [sms=N]": x, the weight and y packed in the
// layout (nchw by default), their buffers 16-byte aligned, in blocks of the tile (conv_tile.h),
// the reduction cut in `splits` parts (conv_split.h). With `sms`, what the plugin picks for a
// device of N multiprocessors (227 KB of shared memory per block) where tile or splits are not
// given.
kiln::ptx::ConvKernelSpec conv_spec(const std::string& text) {
  const Spec spec(text);
  kiln::kir_support::ConvCall c;
  const std::string dtype = spec.kv.contains("dtype") ? spec.kv.at("dtype") : "f32";
  c.dtype = dtype == "bf16"  ? kiln::kir::DType::BF16
            : dtype == "f16" ? kiln::kir::DType::F16
                             : kiln::kir::DType::F32;
  c.tf32 = dtype == "tf32";
  c.n = spec.number("n"), c.c = spec.number("c"), c.h = spec.number("h"), c.w = spec.number("w");
  c.k = spec.number("k"), c.r = spec.number("r"), c.s = spec.number("s");
  c.stride_h = c.stride_w = spec.number("stride", 1);
  c.pad_h = c.pad_w = spec.number("pad", 0);
  c.dil_h = c.dil_w = spec.number("dil", 1);
  c.groups = spec.number("groups", 1);
  if (c.groups <= 0 || c.c % c.groups || c.k % c.groups)
    throw std::invalid_argument("channels not divisible by groups");
  c.out_h = (c.h + 2 * c.pad_h - c.dil_h * (c.r - 1) - 1) / c.stride_h + 1;
  c.out_w = (c.w + 2 * c.pad_w - c.dil_w * (c.s - 1) - 1) / c.stride_w + 1;
  const bool nhwc = spec.kv.contains("layout") && spec.kv.at("layout") == "nhwc";
  // Strides over (n or k, c, h or r, w or s) of a [d0, d1, d2, d3] tensor.
  const auto strides = [&](int64_t* out, int64_t d1, int64_t d2, int64_t d3) {
    if (nhwc) {
      out[0] = d1 * d2 * d3, out[1] = 1, out[2] = d3 * d1, out[3] = d1;
    } else {
      out[0] = d1 * d2 * d3, out[1] = d2 * d3, out[2] = d3, out[3] = 1;
    }
  };
  strides(c.x_stride, c.c, c.h, c.w);
  strides(c.w_stride, c.c / c.groups, c.r, c.s);
  strides(c.y_stride, c.k, c.out_h, c.out_w);
  const int64_t sms = spec.number("sms", 0);
  kiln::ptx::ConvTile tile =
      sms > 0 ? kiln::ptx::conv_tile_for(c, sms, 227 * 1024) : kiln::ptx::ConvTile{};
  if (spec.kv.contains("tile")) {
    std::string why;
    const auto parsed = kiln::ptx::parse_conv_tile(spec.kv.at("tile"), why);
    if (!parsed) throw std::invalid_argument("tile " + why);
    tile = *parsed;
  }
  const int64_t splits = spec.kv.contains("splits") || sms <= 0
                             ? spec.number("splits", 1)
                             : kiln::ptx::conv_splits(c, tile, sms);
  return kiln::ptx::conv_kernel_spec(c, tile, splits, 0, 0, 0);
}

// --narrow: the module in `path` (LLVM IR text, - for stdin) after narrow_wide_integers, with
// the count of operations narrowed.
int narrow(const std::string& path) {
  auto buffer = path == "-" ? llvm::MemoryBuffer::getSTDIN() : llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    std::cerr << "kiln-ptx-codegen: cannot read " << path << "\n";
    return 1;
  }
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  auto module = llvm::parseIR(**buffer, error, context);
  if (!module) {
    std::cerr << "kiln-ptx-codegen: " << path << ":" << error.getLineNo() << ": "
              << error.getMessage().str() << "\n";
    return 1;
  }
  const int count = kiln::gpu::narrow_wide_integers(*module);
  llvm::outs() << "; narrowed " << count << "\n";
  module->print(llvm::outs(), nullptr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string emit = "ptx", path, attention, conv;
  kiln::ptx::PtxOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--emit" && i + 1 < argc) {
      emit = argv[++i];
    } else if (a == "--arch" && i + 1 < argc) {
      options.arch = argv[++i];
    } else if (a == "--narrow" && i + 1 < argc) {
      return narrow(argv[++i]);
    } else if (a == "--attention" && i + 1 < argc) {
      attention = argv[++i];
    } else if (a == "--conv" && i + 1 < argc) {
      conv = argv[++i];
    } else if (a == "--libdevice" && i + 1 < argc) {
      options.libdevice = argv[++i];
    } else if (a == "--config" && i + 1 < argc) {
      try {
        options.tuning = kiln::gpu::parse_tuning(argv[++i], options.tuning);
      } catch (const std::invalid_argument& e) {
        std::cerr << "kiln-ptx-codegen: " << e.what() << "\n";
        return 2;
      }
    } else if (path.empty()) {
      path = a;
    } else {
      std::cerr << "usage: kiln-ptx-codegen [--emit llvm|ptx] [--arch sm_90] [--libdevice F] "
                   "[--config \"block_size=N ...\"] FILE.kir|- | --attention \"dtype=bf16 "
                   "batch=N heads=N q_len=N kv_len=N head_dim=N [causal=1] [mask=add|keep] "
                   "[rows_per_warp=16|32] [keys=32|64] [heavy_first=0|1]\" | "
                   "--conv \"dtype=bf16 n=N c=N h=N w=N k=N r=N s=N [stride=N pad=N dil=N "
                   "groups=N layout=nhwc tile=RxBxS splits=N]\" | "
                   "--narrow FILE.ll|-\n";
      return 2;
    }
  }
  // One of the plugin's own kernels for a call spec: printed, or the reason it is refused.
  const auto own_kernel = [&](const char* flag, const auto& compile) {
    try {
      const kiln::ptx::PtxOutput out = compile();
      std::cout << (emit == "llvm" ? out.llvm_ir : out.ptx);
    } catch (const std::exception& e) {
      std::cerr << "kiln-ptx-codegen: " << flag << ": " << e.what() << "\n";
      return 1;
    }
    return 0;
  };
  if (path.empty() && (emit == "llvm" || emit == "ptx")) {
    if (!attention.empty())
      return own_kernel("--attention", [&] {
        const kiln::kir_support::AttentionCall call = attention_call(attention);
        const Spec spec(attention);
        const kiln::ptx::AttentionTiling asked = {spec.number("rows_per_warp", 0),
                                                  spec.number("keys", 0),
                                                  spec.number("heavy_first", 1) != 0};
        // Values the plugin's options would refuse are refused here too.
        if (std::string problem = kiln::ptx::attention_values_problem(asked); !problem.empty())
          throw std::invalid_argument(problem);
        return kiln::ptx::compile_attention_to_ptx(call, kiln::ptx::attention_tiling(call, asked),
                                                   options.arch);
      });
    if (!conv.empty())
      return own_kernel(
          "--conv", [&] { return kiln::ptx::compile_conv_to_ptx(conv_spec(conv), options.arch); });
  }
  if (path.empty() || (emit != "llvm" && emit != "ptx")) {
    std::cerr << "usage: kiln-ptx-codegen [--emit llvm|ptx] [--arch sm_90] FILE.kir|-\n";
    return 2;
  }
  const auto kernels = kiln::gpu::read_kir_input(path, "kiln-ptx-codegen");
  if (!kernels) return 1;
  try {
    const auto out = kiln::ptx::compile_to_ptx(*kernels, options);
    std::cout << (emit == "llvm" ? out.llvm_ir : out.ptx);
  } catch (const std::exception& e) {
    std::cerr << "kiln-ptx-codegen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
