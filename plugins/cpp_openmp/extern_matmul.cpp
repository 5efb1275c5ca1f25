#include "plugins/cpp_openmp/extern_matmul.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kiln/kir.hpp"

namespace kiln::cpu {
namespace {

using kir_support::MatmulCall;
using kir_support::MatmulOperand;

template <class T>
double read(const void* base, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return static_cast<double>(v);
}

double load(kir::DType d, const void* p, int64_t i) {
  const auto* b = static_cast<const unsigned char*>(p);
  switch (d) {
    case kir::DType::F32:
      return read<float>(p, i);
    case kir::DType::F64:
      return read<double>(p, i);
    case kir::DType::F16: {
      _Float16 h;
      std::memcpy(&h, b + i * 2, 2);
      return static_cast<double>(h);
    }
    case kir::DType::BF16: {
      uint16_t h;
      std::memcpy(&h, b + i * 2, 2);
      const uint32_t u = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    default:
      throw std::runtime_error("matmul: unsupported float dtype");
  }
}

void store(kir::DType d, void* p, int64_t i, double v) {
  auto* b = static_cast<unsigned char*>(p);
  switch (d) {
    case kir::DType::F32: {
      const float f = static_cast<float>(v);
      std::memcpy(b + i * 4, &f, 4);
      return;
    }
    case kir::DType::F64:
      std::memcpy(b + i * 8, &v, 8);
      return;
    case kir::DType::F16: {
      const _Float16 h = static_cast<_Float16>(static_cast<float>(v));
      std::memcpy(b + i * 2, &h, 2);
      return;
    }
    case kir::DType::BF16: {
      const float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      uint16_t h;
      if ((u & 0x7fffffffu) > 0x7f800000u) {
        h = static_cast<uint16_t>((u >> 16) | 0x40);
      } else {
        h = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
      }
      std::memcpy(b + i * 2, &h, 2);
      return;
    }
    default:
      throw std::runtime_error("matmul: unsupported float dtype");
  }
}

int64_t load_int(kir::DType d, const void* p, int64_t i) {
  const auto* b = static_cast<const char*>(p);
  switch (d) {
    case kir::DType::Bool:
    case kir::DType::U8:
      return static_cast<unsigned char>(b[i]);
    case kir::DType::I8:
      return static_cast<signed char>(b[i]);
    case kir::DType::I16: {
      int16_t v;
      std::memcpy(&v, b + i * 2, 2);
      return v;
    }
    case kir::DType::I32: {
      int32_t v;
      std::memcpy(&v, b + i * 4, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, b + i * 8, 8);
      return v;
    }
  }
}

void store_int(kir::DType d, void* p, int64_t i, int64_t v) {
  char* b = static_cast<char*>(p);
  const auto u = static_cast<uint64_t>(v);
  switch (d) {
    case kir::DType::Bool:
      b[i] = v != 0;
      return;
    case kir::DType::U8:
    case kir::DType::I8:
      b[i] = static_cast<char>(u);
      return;
    case kir::DType::I16: {
      const auto w = static_cast<uint16_t>(u);
      std::memcpy(b + i * 2, &w, 2);
      return;
    }
    case kir::DType::I32: {
      const auto w = static_cast<uint32_t>(u);
      std::memcpy(b + i * 4, &w, 4);
      return;
    }
    default:
      std::memcpy(b + i * 8, &u, 8);
      return;
  }
}

void loop_matmul(const MatmulCall& s, const void* a, const void* b, void* out) {
  const kir::DType d = s.dtype;
  const MatmulOperand &oa = s.a, &ob = s.b;
  const bool fp = kir::is_float(d);
  for (int64_t p = 0; p < s.batch; ++p) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = 0;
        uint64_t iacc = 0;
        for (int64_t q = 0; q < s.k; ++q) {
          const int64_t ia = oa.offset + p * oa.batch + i * oa.row + q * oa.col;
          const int64_t ib = ob.offset + p * ob.batch + q * ob.row + j * ob.col;
          if (fp) {
            acc += load(d, a, ia) * load(d, b, ib);
          } else {
            iacc += static_cast<uint64_t>(load_int(d, a, ia)) *
                    static_cast<uint64_t>(load_int(d, b, ib));
          }
        }
        const int64_t io = (p * s.m + i) * s.n + j;
        if (fp) {
          store(d, out, io, acc);
        } else {
          store_int(d, out, io, static_cast<int64_t>(iacc));
        }
      }
    }
  }
}

}  // namespace

void matmul(const std::vector<void*>& buffers, const MatmulCall& s) {
  const kir::DType d = s.dtype;
  const void* a = buffers.at(0);
  const void* b = buffers.at(1);
  void* out = buffers.at(2);
  if (s.k == 0 || s.m == 0 || s.n == 0 || s.batch == 0) {
    const int64_t elements = s.batch * s.m * s.n;
    for (int64_t i = 0; i < elements; ++i) {
      if (kir::is_float(d)) {
        store(d, out, i, 0.0);
      } else {
        store_int(d, out, i, 0);
      }
    }
    return;
  }
  constexpr int64_t kIntMax = 0x7fffffff;
  const auto la = kir_support::row_major_layout(s.a, s.m, s.k);
  const auto lb = kir_support::row_major_layout(s.b, s.k, s.n);
  const bool blas = (d == kir::DType::F32 || d == kir::DType::F64) && s.m <= kIntMax &&
                    s.n <= kIntMax && s.k <= kIntMax && la && lb;
  if (!blas) {
    loop_matmul(s, a, b, out);
    return;
  }
  const CBLAS_TRANSPOSE ta = la->transposed ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = lb->transposed ? CblasTrans : CblasNoTrans;
  const int lda = static_cast<int>(la->ld), ldb = static_cast<int>(lb->ld);
  const MatmulOperand &oa = s.a, &ob = s.b;
  for (int64_t p = 0; p < s.batch; ++p) {
    if (d == kir::DType::F32) {
      const float* pa = static_cast<const float*>(a) + oa.offset + p * oa.batch;
      const float* pb = static_cast<const float*>(b) + ob.offset + p * ob.batch;
      float* po = static_cast<float*>(out) + p * s.m * s.n;
      cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(s.m), static_cast<int>(s.n),
                  static_cast<int>(s.k), 1.0f, pa, lda, pb, ldb, 0.0f, po, static_cast<int>(s.n));
    } else {
      const double* pa = static_cast<const double*>(a) + oa.offset + p * oa.batch;
      const double* pb = static_cast<const double*>(b) + ob.offset + p * ob.batch;
      double* po = static_cast<double*>(out) + p * s.m * s.n;
      cblas_dgemm(CblasRowMajor, ta, tb, static_cast<int>(s.m), static_cast<int>(s.n),
                  static_cast<int>(s.k), 1.0, pa, lda, pb, ldb, 0.0, po, static_cast<int>(s.n));
    }
  }
}

}  // namespace kiln::cpu
