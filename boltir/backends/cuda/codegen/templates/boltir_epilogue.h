// boltir_epilogue.h: the epilogue pieces boltir adds to CUTLASS 2.x.
//
// Written for boltir from CUTLASS's own headers (cutlass/epilogue/thread/*.h). The emitter
// pastes this file into every translation unit it writes, so that a unit compiles with the
// CUTLASS include paths alone.
//
// * Scalar activations in float, computed as boltir's interpreter computes them
//   (boltir/interp/graph.py), with the accurate libm functions: CUTLASS's own Tanh,
//   Sigmoid and GELU_taylor use tanh.approx.f32 / __expf, whose errors are visible in an
//   f32 output.
// * `Apply<Fn, T>`: the CUTLASS activation concept (`template <typename T> class`, called
//   on a scalar or on an Array<T, N>) for a struct `Fn` with `static float apply(float)`.
//   The emitter writes one `Fn` per instance with the activation's arguments (clip
//   bounds, leaky_relu's slope, hardsigmoid's alpha and beta) as literals, and passes
//   `template <typename T> using Act = Apply<Fn, T>` to LinearCombinationGeneric or
//   LinearCombinationResidualBlock.
// * `B2bFirstEpilogue`: the first epilogue of example 13's back-to-back kernels,
//   act(alpha * acc + beta * bias) in float with the bias vector in the output type.

#pragma once

#include <math.h>

#include "cutlass/cutlass.h"
#include "cutlass/array.h"
#include "cutlass/numeric_types.h"
#include "cutlass/numeric_conversion.h"
#include "cutlass/epilogue/thread/scale_type.h"

namespace boltir {
namespace epilogue {

// ------------------------------------------------------------------ scalar activations
// NaN goes through every comparison below unchanged, as numpy's maximum/clip/where keep it.

CUTLASS_HOST_DEVICE float relu(float x) { return x < 0.0f ? 0.0f : x; }

CUTLASS_HOST_DEVICE float clip_min(float x, float lo) { return x < lo ? lo : x; }

CUTLASS_HOST_DEVICE float clip_max(float x, float hi) { return x > hi ? hi : x; }

CUTLASS_HOST_DEVICE float clip(float x, float lo, float hi) { return clip_max(clip_min(x, lo), hi); }

/// 0.5 x (1 + erf(x / sqrt(2)))
CUTLASS_HOST_DEVICE float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f)); }

/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
CUTLASS_HOST_DEVICE float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}

CUTLASS_HOST_DEVICE float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

CUTLASS_HOST_DEVICE float silu(float x) { return x * sigmoid(x); }

/// x * clip(x / 6 + 0.5, 0, 1)
CUTLASS_HOST_DEVICE float hardswish(float x) { return x * clip(x / 6.0f + 0.5f, 0.0f, 1.0f); }

CUTLASS_HOST_DEVICE float tanh_(float x) { return tanhf(x); }

/// x >= 0 ? x : alpha * x
CUTLASS_HOST_DEVICE float leaky_relu(float x, float alpha) { return x >= 0.0f ? x : x * alpha; }

/// clip(alpha * x + beta, 0, 1)
CUTLASS_HOST_DEVICE float hardsigmoid(float x, float alpha, float beta) {
  return clip(alpha * x + beta, 0.0f, 1.0f);
}

// ---------------------------------------------------------- the CUTLASS activation concept

/// `Fn::apply` on a scalar.
template <typename Fn, typename T>
struct Apply {
  static bool const kIsHeavy = true;

  CUTLASS_HOST_DEVICE
  T operator()(T const &value) const { return T(Fn::apply(float(value))); }
};

/// `Fn::apply` on every element of a fragment.
template <typename Fn, typename T, int N>
struct Apply<Fn, cutlass::Array<T, N>> {
  static bool const kIsHeavy = true;

  CUTLASS_HOST_DEVICE
  cutlass::Array<T, N> operator()(cutlass::Array<T, N> const &value) const {
    cutlass::Array<T, N> result;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) {
      result[i] = T(Fn::apply(float(value[i])));
    }
    return result;
  }
};

/// The identity, as an `Fn`.
struct IdentityFn {
  CUTLASS_HOST_DEVICE static float apply(float x) { return x; }
};

// ------------------------------------------------------------- the 3.x epilogue function

/// The compute node of boltir's CUTLASS 3.x epilogue visitor tree
/// (`Sm90Compute<Elementwise<Fn>::template Op, ...>`): `Fn::apply(acc, bias, residual)`
/// (as many arguments as the tree has children) on every element of the fragments,
/// which Sm90Compute hands over already converted to float.
template <typename Fn>
struct Elementwise {
  template <typename T>
  struct Op {
    template <typename... Rest>
    CUTLASS_HOST_DEVICE T operator()(T const &first, Rest const &...rest) const {
      return T(Fn::apply(float(first), float(rest)...));
    }
  };

  template <int N>
  struct Op<cutlass::Array<float, N>> {
    template <typename... Rest>
    CUTLASS_HOST_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> const &first,
                                                             Rest const &...rest) const {
      cutlass::Array<float, N> result;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < N; ++i) {
        result[i] = Fn::apply(first[i], rest[i]...);
      }
      return result;
    }
  };
};

// ------------------------------------------------------------ back-to-back first epilogue

/// The first epilogue of example 13's B2bGemm / B2bImplicitGemmConvolution:
/// `act(alpha * acc + beta * bias)` in float, rounded once to ElementOutput.
///
/// Example 13 loads the per-channel bias vector with the element type
/// `OutputOp::ElementCompute`, so `ElementCompute` here names the bias element type
/// (the output's); the arithmetic itself is float. Without a bias (`HasBias` false) the
/// loaded vector is ignored. Split-k does not apply to the first GEMM.
template <
  typename ElementOutput_,      ///< the intermediate's element type (the second GEMM's A)
  int Count,                    ///< elements per call (example 13: instruction M * N / 32)
  typename ElementAccumulator_,
  typename ElementBias_,        ///< the bias vector's element type
  typename Fn,                  ///< the activation: `static float apply(float)`
  bool HasBias
>
class B2bFirstEpilogue {
public:
  using ElementOutput = ElementOutput_;
  using ElementAccumulator = ElementAccumulator_;
  using ElementCompute = ElementBias_;
  static int const kCount = Count;
  static cutlass::epilogue::thread::ScaleType::Kind const kScale =
      cutlass::epilogue::thread::ScaleType::OnlyAlphaScaling;
  static bool const kIsHeavy = true;

  using FragmentOutput = cutlass::Array<ElementOutput, kCount>;
  using FragmentAccumulator = cutlass::Array<ElementAccumulator, kCount>;
  using FragmentScaleBias = cutlass::Array<ElementCompute, kCount>;
  using FragmentSource = cutlass::Array<ElementOutput, kCount>;
  using FragmentCompute = cutlass::Array<float, kCount>;

  struct Params {
    float alpha;
    float beta;

    CUTLASS_HOST_DEVICE
    Params() : alpha(1.0f), beta(1.0f) {}

    CUTLASS_HOST_DEVICE
    Params(float alpha_, float beta_) : alpha(alpha_), beta(beta_) {}
  };

private:
  float alpha_;
  float beta_;

public:
  CUTLASS_HOST_DEVICE
  B2bFirstEpilogue(Params const &params) : alpha_(params.alpha), beta_(params.beta) {}

  CUTLASS_HOST_DEVICE
  bool is_source_needed() const { return false; }

  CUTLASS_HOST_DEVICE
  void set_k_partition(int, int) {}

  /// act(alpha * acc)
  CUTLASS_HOST_DEVICE
  FragmentOutput operator()(FragmentAccumulator const &accumulator) const {
    FragmentOutput result;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kCount; ++i) {
      result[i] = ElementOutput(Fn::apply(alpha_ * float(accumulator[i])));
    }
    return result;
  }

  /// Never called: the source is not needed.
  CUTLASS_HOST_DEVICE
  FragmentOutput operator()(FragmentAccumulator const &accumulator, FragmentSource const &) const {
    return (*this)(accumulator);
  }

  /// act(alpha * acc + beta * bias); the per-channel scale is unused (OnlyAlphaScaling).
  CUTLASS_HOST_DEVICE
  FragmentOutput operator()(
      FragmentAccumulator const &accumulator,
      FragmentScaleBias const &,
      FragmentScaleBias const &bias) const {
    FragmentOutput result;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kCount; ++i) {
      float x = alpha_ * float(accumulator[i]);
      if (HasBias) {
        x += beta_ * float(bias[i]);
      }
      result[i] = ElementOutput(Fn::apply(x));
    }
    return result;
  }
};

}  // namespace epilogue
}  // namespace boltir
