#include "plugins/cpp_openmp/extern_matmul.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kiln/kir.hpp"

namespace kiln::cpu {
namespace {

struct Operand {
  int64_t offset, batch, row, col;
};

struct Shape {
  int64_t batch, m, n, k;
};

// Row-major BLAS layout of an operand with `rows` x `cols`: the transpose flag and leading
// dimension, or false when neither stride is 1 (or the leading dimension is too small).
bool blas_layout(const Operand& o, int64_t rows, int64_t cols, CBLAS_TRANSPOSE& trans,
                 int64_t& ld) {
  // NoTrans: element (r, c) at r * ld + c.
  if (o.col == 1 || cols == 1) {
    trans = CblasNoTrans;
    ld = rows == 1 ? std::max<int64_t>(cols, 1) : o.row;
    if (ld >= std::max<int64_t>(cols, 1)) return true;
  }
  // Trans: element (r, c) at c * ld + r.
  if (o.row == 1 || rows == 1) {
    trans = CblasTrans;
    ld = cols == 1 ? std::max<int64_t>(rows, 1) : o.col;
    return ld >= std::max<int64_t>(rows, 1);
  }
  return false;
}

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

void loop_matmul(kir::DType d, const Shape& s, const void* a, const Operand& oa, const void* b,
                 const Operand& ob, void* out) {
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

void matmul(const std::vector<void*>& buffers, const std::vector<int64_t>& params) {
  if (buffers.size() != 3 || params.size() != 13)
    throw std::runtime_error("matmul takes 3 buffers and 13 parameters, got " +
                             std::to_string(buffers.size()) + " and " +
                             std::to_string(params.size()));
  if (params[0] < 0 || params[0] > static_cast<int64_t>(kir::DType::F64))
    throw std::runtime_error("matmul: unknown dtype code " + std::to_string(params[0]));
  const auto d = static_cast<kir::DType>(params[0]);
  const Shape s{params[1], params[2], params[3], params[4]};
  for (int64_t v : {s.batch, s.m, s.n, s.k})
    if (v < 0) throw std::runtime_error("matmul: negative size");
  const Operand oa{params[5], params[6], params[7], params[8]};
  const Operand ob{params[9], params[10], params[11], params[12]};
  const void* a = buffers[0];
  const void* b = buffers[1];
  void* out = buffers[2];
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
  CBLAS_TRANSPOSE ta, tb;
  int64_t lda = 0, ldb = 0;
  constexpr int64_t kIntMax = 0x7fffffff;
  const bool blas = (d == kir::DType::F32 || d == kir::DType::F64) && s.m <= kIntMax &&
                    s.n <= kIntMax && s.k <= kIntMax && blas_layout(oa, s.m, s.k, ta, lda) &&
                    blas_layout(ob, s.k, s.n, tb, ldb);
  if (!blas) {
    loop_matmul(d, s, a, oa, b, ob, out);
    return;
  }
  for (int64_t p = 0; p < s.batch; ++p) {
    if (d == kir::DType::F32) {
      const float* pa = static_cast<const float*>(a) + oa.offset + p * oa.batch;
      const float* pb = static_cast<const float*>(b) + ob.offset + p * ob.batch;
      float* po = static_cast<float*>(out) + p * s.m * s.n;
      cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(s.m), static_cast<int>(s.n),
                  static_cast<int>(s.k), 1.0f, pa, static_cast<int>(lda), pb, static_cast<int>(ldb),
                  0.0f, po, static_cast<int>(s.n));
    } else {
      const double* pa = static_cast<const double*>(a) + oa.offset + p * oa.batch;
      const double* pb = static_cast<const double*>(b) + ob.offset + p * ob.batch;
      double* po = static_cast<double*>(out) + p * s.m * s.n;
      cblas_dgemm(CblasRowMajor, ta, tb, static_cast<int>(s.m), static_cast<int>(s.n),
                  static_cast<int>(s.k), 1.0, pa, static_cast<int>(lda), pb, static_cast<int>(ldb),
                  0.0, po, static_cast<int>(s.n));
    }
  }
}

}  // namespace kiln::cpu
