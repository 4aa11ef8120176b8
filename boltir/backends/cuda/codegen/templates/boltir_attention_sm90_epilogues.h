#pragma once
// boltir's epilogues for CUTLASS example 88's Hopper attention kernel, around the example's
// FmhaFwdEpilogue (a template argument of its kernel): pasted after the mainloop header only
// into units that use one (attention_sm90_kernels.fusion_header), so that the other units'
// sources, and the objects compiled from them, stay as they are.

#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/cutlass.h"

namespace boltir {
namespace attention_sm90 {

#ifdef BOLTIR_ATTENTION_TRACE
enum EpilogueTraceEvent { kEpilogueEntry = kTileExit + 1, kEpilogueExit };  // bench/trace_attention.py's 9 and 10

/// The example's epilogue between two events, so that a tile's exit to the next tile's entry
/// splits into the kernel's order-barrier wait before the epilogue, the epilogue, and the
/// next tile's start.
template <class Base>
struct TracedEpilogue : Base {
  template <class... Args>
  CUTLASS_DEVICE void operator()(Args &&...args) {
    trace(kEpilogueEntry);
    Base::operator()(static_cast<Args &&>(args)...);
    trace(kEpilogueExit);
  }
};
#endif

/// The example's epilogue (`Base`: FmhaFwdEpilogue, whose arguments it takes) with O staged in
/// shared memory and written by one TMA store that nothing waits for here: the warp group's
/// next epilogue waits for it before reusing the buffer, and a block's last tile before the
/// block exits. The example waits for its stores at every tile, both warp groups at once
/// (bench.trace_attention: the gap between tiles is mostly that epilogue). Each warp group
/// synchronizes on its own named barrier. The log-sum-exp rows are not written: nothing reads
/// them.
template <class Element, class Base, int kWarpGroups, int kBlockRows>
struct StoreEpilogue : Base {
  using typename Base::Arguments;
  using StrideO = cute::tuple<int, cute::_1, cute::tuple<int, int>>;
  using ShapeO = cute::Shape<int, int, cute::Shape<int, int>>;
  using SmemLayoutO =
      decltype(cute::tile_to_shape(cute::GMMA::Layout_K_SW128_Atom<Element>{}, cute::Shape<cute::_64, cute::_64>{}));
  using TmaStoreO = decltype(cute::make_tma_copy(
      cute::SM90_TMA_STORE{}, cute::make_tensor(cute::make_gmem_ptr(static_cast<Element *>(nullptr)), ShapeO{}, StrideO{}),
      SmemLayoutO{}));
  struct TensorStorage {
    cute::array_aligned<Element, cute::cosize_v<SmemLayoutO>, 1024> smem_o;
  };
  struct Params {
    TmaStoreO tma_store_o;
  };

  template <class ProblemShape>
  CUTLASS_HOST_DEVICE static ShapeO shape_of(ProblemShape const &problem_size) {
    using namespace cute;
    return make_shape(get<2>(problem_size), get<4>(problem_size), make_shape(get<0>(problem_size), get<1>(problem_size)));
  }

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const &problem_size, Arguments const &args, void * = nullptr) {
    using namespace cute;
    Tensor mO = make_tensor(make_gmem_ptr(args.ptr_O), shape_of(problem_size), args.dO);
    return Params{make_tma_copy(SM90_TMA_STORE{}, mO, SmemLayoutO{})};
  }

  template <class TileShape, class BlkCoord, class ResultTuple, class TiledMma, class ProblemShape>
  CUTLASS_DEVICE void operator()(TileShape const &tile_shape, BlkCoord const &blk_coord, ResultTuple const &result,
                                 TiledMma const &tiled_mma, ProblemShape const &problem_size, Params const &params,
                                 typename Base::LoadPipeline, TensorStorage &storage) {
    using namespace cute;
    static_assert(get<0>(TileShape{}) == 64 && get<1>(TileShape{}) == 64, "a warp group's 64 x 64 tile of O");
    int const group = int(threadIdx.x) / cutlass::NumThreadsPerWarpGroup - 1;  // warp group 0 loads
    bool const leader = int(threadIdx.x) % cutlass::NumThreadsPerWarpGroup == 0;
    auto barrier = [&] { cutlass::arch::NamedBarrier::sync(cutlass::NumThreadsPerWarpGroup, group); };
    if (leader) {
      tma_store_wait<0>();  // the previous tile's store has read the buffer
    }
    barrier();
    Tensor sO = make_tensor(make_smem_ptr(storage.smem_o.data()), SmemLayoutO{});
    auto thr_mma = tiled_mma.get_thread_slice(threadIdx.x);
    Tensor tOsO = thr_mma.partition_C(sO);
    auto const &acc = get<0>(result);
    Tensor tOrO = make_tensor_like<Element>(acc);
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < size(acc); i++) {
      tOrO(i) = Element(acc(i));
    }
    copy(tOrO, tOsO);
    tma_store_fence();  // the writes visible to the TMA unit
    barrier();
    if (leader) {
      Tensor mO = params.tma_store_o.get_tma_tensor(shape_of(problem_size));
      Tensor gO = local_tile(mO, tile_shape, make_coord(_, _, _), Step<_1, _1, Underscore>{})(
          _, _, get<0>(blk_coord), _0{}, get<2>(blk_coord));
      auto tma = params.tma_store_o.get_slice(0);
      copy(params.tma_store_o, tma.partition_S(sO), tma.partition_D(gO));
      tma_store_arrive();
      // the example's PersistentTileScheduler: the block's tile (m, b, h) is m + M (b + B h),
      // its next one gridDim.x further
      int const m_blocks = (get<2>(problem_size) + kBlockRows - 1) / kBlockRows;
      int const tile = get<0>(blk_coord) / kWarpGroups +
                       m_blocks * (get<0>(get<2>(blk_coord)) + get<0>(problem_size) * get<1>(get<2>(blk_coord)));
      if (tile + int(gridDim.x) >= m_blocks * get<0>(problem_size) * get<1>(problem_size)) {
        tma_store_wait<0>();  // the block's last tile: the buffer outlives the store
      }
    }
  }
};

}  // namespace attention_sm90
}  // namespace boltir
