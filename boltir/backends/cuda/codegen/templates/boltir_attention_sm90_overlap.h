#pragma once
// boltir's mainloop for CUTLASS example 88's Hopper attention, the "overlap" schedule: the
// example's collective (FmhaMainloopTmaWarpSpecialized: its loads, shared storage, MMAs and
// types) with our own `compute`, which overlaps each key step's softmax with the previous
// step's P·V product inside a warp group.
//
// The example's compute waits for both products of a step before its softmax, so a warp
// group's tensor cores idle while it computes exponentials. Here, at key step j:
//   issue S_j = Q·K_jᵀ; issue O += P_{j-1}·V_{j-1}; wait for S_j only;
//   softmax(S_j) -> P_j and the rows' correction exp(m_old - m_new)  (the P·V product runs);
//   wait for O; O *= correction.
// P_j lives in registers next to P_{j-1} (the A operand of the product in flight), which the
// MMA warp groups' 240 registers hold. The online softmax's state (row maxima, the thread's
// partial row sums) is the example's, so its `tail` finishes the rows.
//
// Shared-memory stages: the producer loads K_0, V_0, K_1, V_1, ... into one pipeline; step j
// waits for K_j before V_{j-1} (a later stage first, which the barriers allow) and releases
// each stage once its product has completed.
//
// A tile's start: S_0's product is issued first; the tile's step counts (the fusion's chain of
// shared-memory and key-length loads) are taken while it runs, and S_0 goes through the
// fusion only where the tile has no unmasked step.

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"

namespace boltir {
namespace attention_sm90 {

#ifdef BOLTIR_ATTENTION_TRACE
// bench/trace_attention.py: each MMA warp group's events, (global timer in ns << 8) | event,
// in order; the unit's launcher `_trace` copies them out. Never in a build's units.
enum TraceEvent { kTileEntry = 1, kQReady, kStepTop, kScoresReady, kSoftmaxDone, kProductDone, kLastProductDone, kTileExit };
constexpr int kTraceGroups = 2 * 264;  // two MMA warp groups of up to 264 persistent blocks
constexpr int kTraceEvents = 2048;     // a warp group's
static __device__ unsigned long long trace_records[kTraceGroups][kTraceEvents];
static __device__ int trace_counts[kTraceGroups];
// the Q-loading warp's events, a block's: the start of a tile's Q loads (before it waits for
// free Q stages) and their issue
enum TraceQEvent { kQLoadStart = 1, kQLoadIssued };
constexpr int kTraceBlocks = 264;
constexpr int kTraceQEvents = 512;
static __device__ unsigned long long trace_q_records[kTraceBlocks][kTraceQEvents];
static __device__ int trace_q_counts[kTraceBlocks];
template <int kEvents>
CUTLASS_DEVICE void record(unsigned long long (&records)[kEvents], int &count, int event) {
  int const at = count;
  if (at < kEvents) {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    records[at] = (now << 8) | unsigned(event);
    count = at + 1;
  }
}
CUTLASS_DEVICE void trace(int event) {
  int const group = int(blockIdx.x) * 2 + (int(threadIdx.x) / 128 - 1);  // warp group 0 loads
  if (threadIdx.x % 128 == 0 && group >= 0 && group < kTraceGroups) {
    record(trace_records[group], trace_counts[group], event);
  }
}
CUTLASS_DEVICE void trace_q(int event) {
  int const block = int(blockIdx.x);
  if (threadIdx.x % 32 == 0 && block < kTraceBlocks) {
    record(trace_q_records[block], trace_q_counts[block], event);
  }
}
/// Host side, for the unit's `_trace`: one kind of stream's counts, then its records, into
/// `out` (kStreams + kStreams × kEvents words).
template <int kStreams, int kEvents>
inline cudaError_t copy_streams(unsigned long long *out, int const (&counts_symbol)[kStreams],
                                unsigned long long const (&records_symbol)[kStreams][kEvents]) {
  int counts[kStreams];
  cudaError_t const error = cudaMemcpyFromSymbol(counts, counts_symbol, sizeof(counts));
  if (error != cudaSuccess) return error;
  for (int s = 0; s < kStreams; ++s) out[s] = (unsigned long long)counts[s];
  return cudaMemcpyFromSymbol(out + kStreams, records_symbol, sizeof(records_symbol));
}
#define BOLTIR_TRACE(event) ::boltir::attention_sm90::trace(::boltir::attention_sm90::event)
#else
#define BOLTIR_TRACE(event)
#endif

template <class Base, class Fusion, bool SumsUnderLastProduct = false>
struct OverlappedMainloop : Base {
  using typename Base::Element;
  using typename Base::ElementAccumulatorQK;
  using typename Base::MainloopPipeline;
  using typename Base::MainloopPipelineQ;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::PipelineStateQ;
  using typename Base::SharedStorage;
  using typename Base::SmemLayoutK;
  using typename Base::SmemLayoutQ;
  using typename Base::SmemLayoutV;
  using typename Base::TiledMmaPV;
  using typename Base::TiledMmaQK;
  using typename Base::TileShape;
  using typename Base::TileShapePV;
  using typename Base::TileShapeQK;

#ifdef BOLTIR_ATTENTION_TRACE
  /// The example's Q loads, between two of the Q warp's events (bench/trace_attention.py).
  template <class BlkCoord, class ProblemShape, class LoadWarpBarrier>
  CUTLASS_DEVICE void load_maybe_q(BlkCoord const &blk_coord, Params const &params, ProblemShape const &problem_size,
                                   MainloopPipelineQ &pipeline_q, PipelineStateQ &smem_pipe_write_q, SharedStorage &storage,
                                   LoadWarpBarrier &load_warp_barrier, bool do_barrier) {
    trace_q(kQLoadStart);
    Base::load_maybe_q(blk_coord, params, problem_size, pipeline_q, smem_pipe_write_q, storage, load_warp_barrier, do_barrier);
    trace_q(kQLoadIssued);
  }
#endif

  /// `rows(i)` combined over the threads that hold parts of row i in `TiledMma`'s
  /// accumulator: a butterfly of shuffles.
  template <class TiledMma, class Rows, class Combine>
  CUTLASS_DEVICE static void combine_across_threads(Rows &rows, Combine combine) {
    auto const target = cutlass::fmha::collective::reduction_target_n(TiledMma{});
    constexpr int kRank = decltype(cute::rank(target))::value;
    cute::for_each(cute::make_seq<kRank>{}, [&](auto r) {
      CUTLASS_PRAGMA_UNROLL
      for (int step = 1; step < cute::shape<r>(target); step *= 2) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < cute::size(rows); i++) {
          rows(i) = combine(rows(i), __shfl_xor_sync(0xffffffffu, rows(i), cute::stride<r>(target) * step));
        }
      }
    });
  }

  /// Row maxima and the thread's partial row sums: the example's softmax state.
  template <class AccQK, class State>
  CUTLASS_DEVICE static void reduce_max(AccQK &acc_qk_mn, State &row_max) {
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < cute::size<0>(acc_qk_mn); i++) {
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < cute::size<1>(acc_qk_mn); j++) {
        row_max(i) = ::fmaxf(row_max(i), acc_qk_mn(i, j));
      }
    }
    combine_across_threads<TiledMmaQK>(row_max, [](float a, float b) { return ::fmaxf(a, b); });
  }

  /// Scores -> exponentials in place (against the new maxima), the rows' corrections
  /// exp(m_old - m_new), and the partial sums rescaled and extended.
  template <class AccQK, class State, class Corrections>
  CUTLASS_DEVICE static void exponentiate(AccQK &acc_qk, State &state, Corrections &correction, float scale_log2) {
    auto acc_qk_mn = cute::make_tensor(acc_qk.data(), cutlass::fmha::collective::layout_acc_mn(TiledMmaQK{}, acc_qk.layout()));
    auto &row_max = cute::get<0>(state);
    auto &row_sum = cute::get<1>(state);
    auto previous = cute::make_fragment_like(row_max);
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < cute::size(row_max); i++) {
      previous(i) = row_max(i);
    }
    reduce_max(acc_qk_mn, row_max);
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < cute::size<0>(acc_qk_mn); i++) {
      // a row with every score -inf so far keeps 0 as its maximum (no inf - inf)
      float const current = row_max(i) == -INFINITY ? 0.0f : row_max(i);
      float const before = previous(i) == -INFINITY ? current : previous(i);
      correction(i) = ::exp2f((before - current) * scale_log2);
      float const offset = current * scale_log2;
      float sum = 0.0f;
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < cute::size<1>(acc_qk_mn); j++) {
        acc_qk_mn(i, j) = ::exp2f(acc_qk_mn(i, j) * scale_log2 - offset);
        sum += acc_qk_mn(i, j);
      }
      row_sum(i) = row_sum(i) * correction(i) + sum;
    }
  }

  template <class AccPV, class Corrections>
  CUTLASS_DEVICE static void rescale(AccPV &acc_pv, Corrections const &correction) {
    auto acc_pv_mn = cute::make_tensor(acc_pv.data(), cutlass::fmha::collective::layout_acc_mn(TiledMmaPV{}, acc_pv.layout()));
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < cute::size<0>(acc_pv_mn); i++) {
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < cute::size<1>(acc_pv_mn); j++) {
        acc_pv_mn(i, j) *= correction(i);
      }
    }
  }

  /// The rows' sums over the threads that share each row, and from them each row's scale for O
  /// (1 / sum; 1 where a row saw no key, whose O stays 0) and log-sum-exp: the example's tail
  /// without its products with O, so that it can run while the last P·V product does.
  template <class State>
  CUTLASS_DEVICE static auto row_totals(State &state, float scale_softmax) {
    auto const &row_max = cute::get<0>(state);
    auto &row_sum = cute::get<1>(state);
    combine_across_threads<TiledMmaPV>(row_sum, [](float a, float b) { return a + b; });
    auto inverse = cute::make_fragment_like(row_sum);
    auto lse = cute::make_fragment_like(row_sum);
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < cute::size(row_sum); i++) {
      float const sum = row_sum(i);
      bool const empty = sum == 0.0f || sum != sum;
      inverse(i) = empty ? 1.0f : __frcp_rn(sum);
      lse(i) = empty ? INFINITY : row_max(i) * scale_softmax + __logf(sum);
    }
    return cute::make_tuple(inverse, lse);
  }

  template <class BlkCoord, class ProblemShape, class MainloopPipelineReducer, class PipelineStateReducer,
            class MathWgOrderBarrier>
  CUTLASS_DEVICE auto compute(BlkCoord const &blk_coord, BlkCoord const &wg_coord, Params const &params,
                              ProblemShape const &problem_size, MainloopPipeline &pipeline, PipelineState &smem_pipe_read,
                              MainloopPipelineQ &pipeline_q, PipelineStateQ &smem_pipe_read_q, MainloopPipelineReducer &,
                              PipelineStateReducer &, SharedStorage &storage, MathWgOrderBarrier &math_wg_order_barrier) {
    using namespace cute;
    BOLTIR_TRACE(kTileEntry);
    int const thread_idx = int(threadIdx.x);

    TiledMmaQK tiled_mma_qk;
    auto thr_mma_qk = tiled_mma_qk.get_thread_slice(thread_idx);
    Tensor sQ = make_tensor(make_smem_ptr(storage.smem_q.data()), SmemLayoutQ{});
    Tensor sK = make_tensor(make_smem_ptr(storage.smem_k.data()), SmemLayoutK{});
    Tensor tSrQ = thr_mma_qk.make_fragment_A(thr_mma_qk.partition_A(sQ));
    Tensor tSrK = thr_mma_qk.make_fragment_B(thr_mma_qk.partition_B(sK));

    TiledMmaPV tiled_mma_pv;
    auto thr_mma_pv = tiled_mma_pv.get_thread_slice(thread_idx);
    Tensor sV = make_tensor(make_smem_ptr(storage.smem_v.data()), SmemLayoutV{});
    Tensor tOrV = thr_mma_pv.make_fragment_B(thr_mma_pv.partition_B(sV));

    // the query-key positions of this warp group's accumulator, for the fusion
    Tensor cP = make_identity_tensor(take<0, 2>(TileShapeQK{}));
    Tensor tPcP = thr_mma_qk.partition_C(cP);
    tPcP.data() = tPcP.data() + E<0>{} * get<0>(wg_coord) * get<0>(TileShapeQK{});

    // O starts at zero and every product accumulates: one code path for the first step
    // and the rest (a branch between two wgmma forms made ptxas serialize them)
    Tensor acc_pv = partition_fragment_C(tiled_mma_pv, take<0, 2>(TileShapePV{}));
    clear(acc_pv);
    tiled_mma_pv.accumulate_ = GMMA::ScaleOut::One;
    cutlass::fmha::collective::CollectiveSoftmax<ElementAccumulatorQK, Fusion, Params> softmax{params};
    auto state = softmax.init(acc_pv, tiled_mma_pv);
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < size(get<0>(state)); i++) {
      get<0>(state)(i) = -INFINITY;
      get<1>(state)(i) = 0.0f;
    }
    auto correction = make_fragment_like(get<1>(state));
    float const scale_log2 = params.scale_softmax_log2;

    pipeline_q.consumer_wait(smem_pipe_read_q);
    BOLTIR_TRACE(kQReady);
    int const q_stage = smem_pipe_read_q.index();

    PipelineState const first = smem_pipe_read;
    auto stage_of = [&](int position) {  // K_j at 2j, V_j at 2j + 1
      PipelineState state_at = first;
      state_at.advance(position);
      return state_at;
    };

    // step 0: S_0 and its softmax; nothing to overlap yet
    Tensor acc_qk = partition_fragment_C(tiled_mma_qk, take<0, 2>(TileShapeQK{}));
    PipelineState k_state = stage_of(0);
    BOLTIR_TRACE(kStepTop);
    pipeline.consumer_wait(k_state);
    math_wg_order_barrier.wait();
    warpgroup_fence_operand(acc_qk);
    warpgroup_arrive();
    cutlass::fmha::collective::gemm_zero_acc(tiled_mma_qk, tSrQ(_, _, _, q_stage), tSrK(_, _, _, k_state.index()), acc_qk);
    warpgroup_commit_batch();
    math_wg_order_barrier.arrive();
    // key tiles: the unmasked ones first (no fusion), then those the fusion masks; counted
    // while S_0's product runs (the header's "a tile's start")
    auto const counts = Fusion{}.trip_counts(blk_coord, TileShape{}, problem_size);
    int const unmasked = cute::get<0>(counts);
    int const steps = cute::get<1>(counts);
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc_qk);
    BOLTIR_TRACE(kScoresReady);
    pipeline.consumer_release(k_state);
    if (unmasked == 0) {  // the first step is masked (or biased)
      Fusion{}.before_softmax(acc_qk, tPcP, problem_size);
    }
    exponentiate(acc_qk, state, correction, scale_log2);
    Tensor p = cutlass::fmha::collective::make_acc_into_op<Element>(acc_qk, typename TiledMmaPV::LayoutA_TV{});
    BOLTIR_TRACE(kSoftmaxDone);
    auto issue_pv = [&](PipelineState const &v_state) {  // O += P V, asynchronously
      pipeline.consumer_wait(v_state);
      warpgroup_fence_operand(acc_pv);
      warpgroup_fence_operand(p);
      warpgroup_arrive();
      cute::gemm(tiled_mma_pv, p, tOrV(_, _, _, v_state.index()), acc_pv);
      warpgroup_commit_batch();
    };

    CUTLASS_PRAGMA_NO_UNROLL
    for (int step = 1; step < steps; step++) {
      tPcP.data() = tPcP.data() + E<1>{} * get<1>(TileShapeQK{});
      k_state = stage_of(2 * step);
      PipelineState const v_state = stage_of(2 * step - 1);
      Tensor scores = partition_fragment_C(tiled_mma_qk, take<0, 2>(TileShapeQK{}));

      BOLTIR_TRACE(kStepTop);
      pipeline.consumer_wait(k_state);
      warpgroup_fence_operand(scores);
      warpgroup_arrive();
      cutlass::fmha::collective::gemm_zero_acc(tiled_mma_qk, tSrQ(_, _, _, q_stage), tSrK(_, _, _, k_state.index()), scores);
      warpgroup_commit_batch();

      issue_pv(v_state);

      warpgroup_wait<1>();  // S_j (committed first) is done; O += P_{j-1} V_{j-1} runs on
      warpgroup_fence_operand(scores);
      BOLTIR_TRACE(kScoresReady);
      pipeline.consumer_release(k_state);
      if (step >= unmasked) {
        Fusion{}.before_softmax(scores, tPcP, problem_size);
      }
      exponentiate(scores, state, correction, scale_log2);
      Tensor p_next = cutlass::fmha::collective::make_acc_into_op<Element>(scores, typename TiledMmaPV::LayoutA_TV{});
      BOLTIR_TRACE(kSoftmaxDone);

      warpgroup_wait<0>();
      warpgroup_fence_operand(acc_pv);
      warpgroup_fence_operand(p);
      BOLTIR_TRACE(kProductDone);
      pipeline.consumer_release(v_state);
      rescale(acc_pv, correction);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < size(p); i++) {
        p(i) = p_next(i);
      }
    }

    // the last product (SumsUnderLastProduct: the rows' totals while it runs)
    PipelineState const v_state = stage_of(2 * steps - 1);
    issue_pv(v_state);
    auto finish_product = [&] {  // wait for it and release its stages and Q
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc_pv);
      BOLTIR_TRACE(kLastProductDone);
      pipeline.consumer_release(v_state);
      pipeline_q.consumer_release(smem_pipe_read_q);
      smem_pipe_read = stage_of(2 * steps);
    };
    if constexpr (SumsUnderLastProduct) {
      auto const totals = row_totals(state, params.scale_softmax);
      finish_product();
      rescale(acc_pv, get<0>(totals));
      BOLTIR_TRACE(kTileExit);
      return make_tuple(acc_pv, get<1>(totals));
    } else {
      finish_product();
      Tensor lse = softmax.tail(state, acc_pv, tiled_mma_pv);
      BOLTIR_TRACE(kTileExit);
      return make_tuple(acc_pv, lse);
    }
  }
};

}  // namespace attention_sm90
}  // namespace boltir
