#pragma once
// boltir's traced epilogue for CUTLASS example 88's Hopper attention kernel, around the
// example's FmhaFwdEpilogue (a template argument of its kernel): pasted after the mainloop
// header only into traced units (attention_sm90_kernels.fusion_header), so that the other
// units' sources, and the objects compiled from them, stay as they are.

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

}  // namespace attention_sm90
}  // namespace boltir
