#pragma once
// boltir's fusion for CUTLASS example 88's Hopper attention (FmhaMainloopTmaWarpSpecialized):
// what the mainloop asks of its `Fusion` template parameter, for op.attention's masks.
//
//   scores[i, j] = q[i] . k[j] * scale + bias[b, h, i, j]   (the bias: any broadcast of [B, H, Sq, Sk])
//   masked (-inf) where j >= keys(b) = min(Sk, key_lengths[b]), and where j > i when causal.
//
// The collective makes a fresh `Fusion{}` at every call and hands `before_softmax` only the
// (query, key) positions of the accumulator, not the tile's batch and head. So the launch's
// arguments (bias pointer and strides, key lengths, scale, causal) are a kernel parameter
// that the kernel wrapper copies into the first `kStateBytes` of dynamic shared memory
// (`BlockState`), and each thread records its tile's (batch, head, keys) there when the
// mainloop asks it for the tile's trip counts, which it does for every tile before any
// before_softmax (with the tile's coordinate); `before_softmax` reads them back. The kernel's own shared storage
// starts `kStateBytes` further, a multiple of 1024 bytes, so its swizzled buffers keep
// their alignment.
//
// Trip counts: the key tiles a query tile visits end at keys(b) (and at its last row when
// causal), at least one (a row with no keys gets zeros: every score -inf, the sum 0). The
// mainloop runs the unmasked tiles first without the fusion, then the masked ones with it:
// with a bias every tile is "masked" (the bias is added in before_softmax); without one,
// only the tiles that cross keys(b) or the causal diagonal.

#include <math.h>
#include <stdint.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"

namespace boltir {
namespace attention_sm90 {

/// The launch's fusion arguments, passed by value to the kernel wrapper.
struct FusionArguments {
  const void *bias;            ///< null: no bias
  const int32_t *key_lengths;  ///< null: every key
  int64_t bias_b, bias_h, bias_m;  ///< the bias's (batch, head, query) strides in elements (0: broadcast)
  float scale;
  int causal;
  int paired;  ///< the bias takes 4-byte loads: its pointer, strides and Sk are even
};

/// A thread's current tile: its key count, batch and head (at most 65535 of each).
struct TileState {
  int keys;
  uint16_t batch, head;
};

constexpr int kMaxThreads = 384;  ///< a load warp group and two MMA warp groups

struct BlockState {
  FusionArguments arguments;
  TileState tiles[kMaxThreads];
};

/// Bytes of dynamic shared memory in front of the kernel's own storage.
constexpr int kStateBytes = int((sizeof(BlockState) + 1023) / 1024 * 1024);

CUTLASS_DEVICE BlockState &block_state() {
  extern __shared__ __align__(16) char boltir_attention_shared[];
  return *reinterpret_cast<BlockState *>(boltir_attention_shared);
}

/// In the kernel wrapper, before the kernel: every thread sees the arguments afterwards.
CUTLASS_DEVICE void publish(FusionArguments const &arguments) {
  if (threadIdx.x == 0) {
    block_state().arguments = arguments;
  }
  __syncthreads();
}

template <bool kBias, class Element>
struct Fusion {
  /// The keys that batch `b` reads: Sk, or fewer by its key length.
  template <class ProblemSize>
  CUTLASS_DEVICE static int keys_of(int batch, ProblemSize const &problem_size) {
    FusionArguments const &arguments = block_state().arguments;
    int keys = cute::get<3>(problem_size);
    if (arguments.key_lengths != nullptr) {
      keys = ::max(0, ::min(keys, arguments.key_lengths[batch]));
    }
    return keys;
  }

  /// Keys the query tile can see: keys(b), and no further than its last row when causal.
  template <class BlkCoord, class TileShape, class ProblemSize>
  CUTLASS_DEVICE static int visible_keys(BlkCoord const &blk_coord, TileShape const &tile_shape,
                                         ProblemSize const &problem_size, int keys) {
    if (block_state().arguments.causal) {
      int const last_row = (int(cute::get<0>(blk_coord)) + 1) * int(cute::get<0>(tile_shape)) - 1;
      keys = ::min(keys, last_row + 1);
    }
    return keys;
  }

  /// Records the tile for this thread's later before_softmax calls; returns keys(b).
  template <class BlkCoord, class ProblemSize>
  CUTLASS_DEVICE static int enter_tile(BlkCoord const &blk_coord, ProblemSize const &problem_size) {
    int const batch = int(cute::get<0>(cute::get<2>(blk_coord)));
    int const head = int(cute::get<1>(cute::get<2>(blk_coord)));
    int const keys = keys_of(batch, problem_size);
    block_state().tiles[threadIdx.x] = TileState{keys, uint16_t(batch), uint16_t(head)};
    return keys;
  }

  /// (unmasked, all): the key tiles without the fusion first, then those it masks; one
  /// enter_tile (a dependent chain of shared-memory and key-length loads and a store: five of
  /// them, one per count as the example asked, held up each tile's start, bench/RESULTS.md).
  template <class BlkCoord, class TileShape, class ProblemSize>
  CUTLASS_DEVICE cute::tuple<int, int> trip_counts(BlkCoord const &blk_coord, TileShape const &tile_shape,
                                                   ProblemSize const &problem_size) {
    int const keys = enter_tile(blk_coord, problem_size);
    int const tile_keys = int(cute::get<1>(tile_shape));
    int const total = ::max(1, int(cute::ceil_div(visible_keys(blk_coord, tile_shape, problem_size, keys), tile_keys)));
    if constexpr (kBias) {
      return {0, total};
    } else {
      int full = keys / tile_keys;  // key tiles below keys(b)
      if (block_state().arguments.causal) {  // and wholly left of the tile's first row's diagonal
        int const first_row = int(cute::get<0>(blk_coord)) * int(cute::get<0>(tile_shape));
        full = ::min(full, (first_row + 1) / tile_keys);
      }
      return {::min(full, total), total};
    }
  }

  // the example's compute asks for the counts one at a time
  template <class BlkCoord, class TileShape, class ProblemSize>
  CUTLASS_DEVICE int get_trip_count(BlkCoord const &blk_coord, TileShape const &tile_shape,
                                    ProblemSize const &problem_size) {
    return cute::get<1>(trip_counts(blk_coord, tile_shape, problem_size));
  }

  template <class BlkCoord, class TileShape, class ProblemSize>
  CUTLASS_DEVICE int get_unmasked_trip_count(BlkCoord const &blk_coord, TileShape const &tile_shape,
                                             ProblemSize const &problem_size) {
    return cute::get<0>(trip_counts(blk_coord, tile_shape, problem_size));
  }

  template <class BlkCoord, class TileShape, class ProblemSize>
  CUTLASS_DEVICE int get_masked_trip_count(BlkCoord const &blk_coord, TileShape const &tile_shape,
                                           ProblemSize const &problem_size) {
    auto const counts = trip_counts(blk_coord, tile_shape, problem_size);
    return cute::get<1>(counts) - cute::get<0>(counts);
  }

  CUTLASS_DEVICE static float to_float(uint16_t bits) { return float(Element::bitcast(bits)); }

  /// `added[i]` = the bias at element i's (row, key), two keys per 4-byte load; with
  /// kKeysOnly (every row the same), an element whose key an earlier element already
  /// loaded takes that value. Requires: Sk, the pointer and the strides even, and
  /// index_qk(0)'s key, `first`, even. kClamp: keys past the last are clamped to it (else
  /// every key of the thread is below Sk, and the loads are one address plus constants).
  template <bool kKeysOnly, bool kClamp = true, class IndexQK, int kElements>
  CUTLASS_DEVICE static void load_pairs(uint16_t const *bias, int64_t bias_m, IndexQK const &index_qk, int first,
                                        int last_row, int last_key, float (&added)[kElements]) {
    bool loaded[kElements] = {};
    // unclamped, every address is `from` plus a constant (the keys' differences fold)
    uint16_t const *from = bias + first;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kElements; i++) {
      int const key = int(cute::get<1>(index_qk(i)));
      int const row = int(cute::get<0>(index_qk(i)));
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < i; j++) {  // compile-time: positions differ by constants
        if (kKeysOnly && !loaded[i] && int(cute::get<1>(index_qk(j))) == key) {
          added[i] = added[j];
          loaded[i] = true;
        }
      }
      if (loaded[i]) {
        continue;
      }
      bool const next_is_pair = i + 1 < kElements && int(cute::get<0>(index_qk(i + 1))) == row &&
                                int(cute::get<1>(index_qk(i + 1))) == key + 1 && key % 2 == 0;
      int const r = kKeysOnly ? 0 : ::min(row, last_row);
      if (next_is_pair) {
        uint16_t const *at = kClamp ? bias + r * bias_m + ::min(key, last_key - 1)  // even: last_key is odd (Sk even)
                                    : from + r * bias_m + (key - first);
        uint32_t const two = __ldg(reinterpret_cast<uint32_t const *>(at));
        added[i] = to_float(uint16_t(two & 0xffffu));
        added[i + 1] = to_float(uint16_t(two >> 16));
        loaded[i + 1] = true;
      } else {
        added[i] = to_float(__ldg(kClamp ? bias + r * bias_m + ::min(key, last_key) : from + r * bias_m + (key - first)));
      }
      loaded[i] = true;
    }
  }

  template <class AccQK, class IndexQK, class ProblemSize>
  CUTLASS_DEVICE void before_softmax(AccQK &acc_qk, IndexQK const &index_qk, ProblemSize const &problem_size) {
    BlockState const &state = block_state();
    FusionArguments const arguments = state.arguments;
    TileState const tile = state.tiles[threadIdx.x];
    bool const causal = arguments.causal != 0;
    if constexpr (kBias) {
      // Every load first, at clamped (always valid) positions and outside any branch, so
      // that they are all in flight at once; the masks are selects afterwards. Loads under
      // the mask's branches each waited out their own latency, one after another.
      uint16_t const *bias = static_cast<uint16_t const *>(arguments.bias) + int64_t(tile.batch) * arguments.bias_b +
                             int64_t(tile.head) * arguments.bias_h;
      int64_t const bias_m = arguments.bias_m;
      int const last_row = cute::get<2>(problem_size) - 1;
      int const last_key = cute::get<3>(problem_size) - 1;
      float const scale = arguments.scale;
      constexpr int kElements = decltype(cute::size(acc_qk))::value;
      float added[kElements];
      // Paired loads where the bias rows allow 4-byte loads (Sk, strides and pointer even):
      // the accumulator holds keys in adjacent pairs, and with a bias broadcast over the
      // queries (a padding mask, bias_m = 0) its rows repeat the same keys. Both facts are
      // checked on index_qk's static layout (the checks fold away), so the loads per thread
      // drop from one per element to one per distinct pair of keys.
      // the thread's keys: the first, and the largest (a constant past it: each difference folds)
      int const first_key_here = int(cute::get<1>(index_qk(0)));
      bool const pairs = arguments.paired && first_key_here % 2 == 0;
      int beyond_first = 0;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 1; i < kElements; i++) {
        beyond_first = ::max(beyond_first, int(cute::get<1>(index_qk(i))) - first_key_here);
      }
      int const last_key_here = first_key_here + beyond_first;
      if (pairs && bias_m == 0 && last_key_here <= last_key) {  // a padding mask's every full step
        load_pairs<true, false>(bias, bias_m, index_qk, first_key_here, last_row, last_key, added);
      } else if (pairs && bias_m == 0) {
        load_pairs<true>(bias, bias_m, index_qk, first_key_here, last_row, last_key, added);
      } else if (pairs) {
        load_pairs<false>(bias, bias_m, index_qk, first_key_here, last_row, last_key, added);
      } else {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < kElements; i++) {
          auto const position = index_qk(i);
          int const row = ::min(int(cute::get<0>(position)), last_row);
          int const key = ::min(int(cute::get<1>(position)), last_key);
          added[i] = to_float(__ldg(bias + row * bias_m + key));
        }
      }
      // A key step wholly below keys(b) and not causal (every step of an unpadded sequence)
      // masks nothing: no per-element compares and selects (about 200 instructions a
      // thread a step).
      if (!causal && last_key_here < tile.keys) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < kElements; i++) {
          acc_qk(i) = acc_qk(i) * scale + added[i];
        }
      } else {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < kElements; i++) {
          auto const position = index_qk(i);
          int const row = cute::get<0>(position);
          int const key = cute::get<1>(position);
          bool const masked = key >= tile.keys || (causal && key > row);
          acc_qk(i) = masked ? -INFINITY : acc_qk(i) * scale + added[i];
        }
      }
    } else {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < cute::size(acc_qk); i++) {
        auto const position = index_qk(i);
        int const row = cute::get<0>(position);
        int const key = cute::get<1>(position);
        if (key >= tile.keys || (causal && key > row)) {
          acc_qk(i) = -INFINITY;
        }
      }
    }
  }
};

}  // namespace attention_sm90
}  // namespace boltir
