#pragma once
// boltir_data.h: what the data-movement and elementwise instances share. Pasted into each
// generated unit (so a unit needs only the CUDA headers); everything is inline or a
// template, so any number of units link into one library.

namespace boltir_data {

/// V elements moved as one access: alignas makes nvcc emit one 4-, 8- or 16-byte
/// ld/st.global.v* instead of V narrow ones.
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

template <int V, typename T, typename Index>
__device__ __forceinline__ Vec<T, V> load(const T *__restrict__ p, Index i) {
  return *reinterpret_cast<const Vec<T, V> *>(p + i);
}

template <int V, typename T, typename Index>
__device__ __forceinline__ void store(T *__restrict__ p, Index i, const Vec<T, V> &x) {
  *reinterpret_cast<Vec<T, V> *>(p + i) = x;
}

template <int V, typename T>
__device__ __forceinline__ Vec<T, V> splat(T x) {
  Vec<T, V> r;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    r.v[k] = x;
  }
  return r;
}

// ------------------------------------------------ register <-> memory element types
// f16 and bf16 are computed in f32 (the interpreter's numpy does the same per op).

__device__ __forceinline__ float to_reg(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_reg(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T to_reg(T x) { return x; }

template <typename S, typename R>
__device__ __forceinline__ S from_reg(R x) { return static_cast<S>(x); }
template <>
__device__ __forceinline__ __half from_reg<__half, float>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_reg<__nv_bfloat16, float>(float x) { return __float2bfloat16_rn(x); }

/// A value rounded to f16 / bf16 precision, kept in f32 (one rounding from f32 or f64).
__device__ __forceinline__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ float round_f16(double x) { return __half2float(__double2half(x)); }
__device__ __forceinline__ float round_bf16(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
__device__ __forceinline__ float round_bf16(double x) { return __bfloat162float(__double2bfloat16(x)); }

// Explicitly rounded arithmetic: nvcc would contract a * b + c into an FMA, numpy does not.
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }

// ------------------------------------------------------------- numpy's semantics

/// np.maximum / np.minimum: NaN propagates (from either side), ties keep the first.
template <typename T>
__device__ __forceinline__ T maximum(T a, T b) { return (a >= b || a != a) ? a : b; }
template <typename T>
__device__ __forceinline__ T minimum(T a, T b) { return (a <= b || a != a) ? a : b; }

/// Integer arithmetic wraps (numpy's), computed unsigned so that overflow is defined;
/// on i1 (bool) add is `or` and mul is `and`, as numpy's.
template <typename T>
__device__ __forceinline__ T wrap_add(T a, T b) { return T((unsigned long long)a + (unsigned long long)b); }
template <typename T>
__device__ __forceinline__ T wrap_sub(T a, T b) { return T((unsigned long long)a - (unsigned long long)b); }
template <typename T>
__device__ __forceinline__ T wrap_mul(T a, T b) { return T((unsigned long long)a * (unsigned long long)b); }

/// ONNX integer division truncates toward zero; numpy gives 0 for a division by zero.
template <typename T>
__device__ __forceinline__ T div_trunc(T a, T b) {
  if (b == T(0)) {
    return T(0);
  }
  if constexpr (std::is_signed<T>::value) {
    if (b == T(-1)) {
      return T(0ULL - (unsigned long long)a);  // INT_MIN / -1 wraps instead of trapping
    }
  }
  return T(a / b);
}

/// np.power on integers: repeated squaring, wrapping. numpy refuses negative exponents;
/// here they truncate (1 / a^-b), as C does.
template <typename T>
__device__ __forceinline__ T ipow(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b < T(0)) {
      return a == T(1) ? T(1) : (a == T(-1) ? ((b & T(1)) ? T(-1) : T(1)) : T(0));
    }
  }
  unsigned long long result = 1, base = (unsigned long long)a, e = (unsigned long long)b;
  for (; e; e >>= 1) {
    if (e & 1) {
      result *= base;
    }
    base *= base;
  }
  return T(result);
}

// ------------------------------------------------------------------------ host side

/// 0, or 1000 + the cudaError_t of the launch (the launcher ABI).
inline int launch_status() {
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? 0 : 1000 + int(error);
}

inline bool aligned(const void *p, int bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <typename Index>
inline unsigned grid_size(Index threads, int block) { return unsigned((threads + block - 1) / block); }

}  // namespace boltir_data
