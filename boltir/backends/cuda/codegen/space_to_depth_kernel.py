"""The `op.space_to_depth` kernel of the data-movement family (`data_kernels.py` registers
it): the input of a blocked stem conv, read once and written once.

One thread writes a whole NHWC pixel of up to 64 bytes (a stem's 16 f16 channels: two
16-byte stores, each channel's source a compile-time offset), or else V consecutive
elements of the result's innermost axis (16 bytes: 8 channels of a wider pixel, or 8
columns of an NCHW row) with one vector store; the launcher falls back to V = 1 when the
result pointer is not aligned to the vector. Each of
its elements is one scalar load or a zero: result channel k < C·b² is input channel
k mod C at block offset (k / (C·b), (k / C) mod b) of pixel (oh, ow)'s block, shifted by
the padding; channels past C·b², and positions in the padding, are zero. Neighbouring
threads read neighbouring blocks, so a warp's loads from an NCHW image cover whole rows
of b·32 elements (coalesced; the b loads of a block share their cache lines).

When the element types differ (both floats), each value is converted once, rounding to
nearest even as `op.cast` does; otherwise bits are copied, so any element type of 8 to
64 bits works. All shapes, pads and layouts are compile-time constants of the instance.
"""

from __future__ import annotations

import math

from boltir.backends.cuda.codegen.kernel_plan import (
    BIT_STORAGE,
    KernelPlan,
    alignment_check,
    computed_element,
    coordinate_expressions,
    element_size,
    empty_plan,
    index_type_for,
    static_shape,
    vector_width_for,
)
from boltir.dialects import op as ops

PIXEL_BYTES = 64
"""The widest NHWC pixel one thread writes whole (32 f16 channels: 4 vector stores)."""


def _source_offset(layout: str, n: int, c: int, h: int, w: int) -> str:
    """The input offset of (n, c, r, col) as C++, in the input's layout."""
    if layout == "NCHW":
        return f"((n * {c} + c) * {h} + r) * {w} + col"
    return f"((n * {h} + r) * {w} + col) * {c} + c"


def space_to_depth_plan(op: ops.SpaceToDepthOp) -> KernelPlan:
    x, y = static_shape(op.input), static_shape(op.output)
    if math.prod(y) == 0:
        return empty_plan(op, "space_to_depth")
    layout, result_layout = op.prop_value("layout"), op.prop_value("result_layout")
    block, (top, left, _, _) = op.prop_value("blocksize"), op.prop_value("pads")
    n, c, h, w = (x[0], x[1], x[2], x[3]) if layout == "NCHW" else (x[0], x[3], x[1], x[2])
    converts = op.input.type.element_type != op.output.type.element_type
    if converts:  # both floats (the verifier's rule): read, convert, write
        source, target = computed_element(op, op.input), computed_element(op, op.output)
        in_storage, out_storage, out_size = source.storage, target.storage, target.size
        elements = f"{source.name}->{target.name}"
    else:  # a copy of bits
        size = element_size(op, op.input)
        in_storage = out_storage = BIT_STORAGE[size]
        out_size = size
        elements = f"bits={8 * size}"
    vector = vector_width_for(out_size, y[-1])
    index_type = index_type_for(x, y)
    # A thread writes a whole NHWC pixel when it is at most PIXEL_BYTES (its channel
    # decomposition is then all constants), else V consecutive elements of the innermost axis.
    whole_pixel = result_layout == "NHWC" and y[-1] * out_size <= PIXEL_BYTES
    if whole_pixel:
        names, coordinates = ("n", "oh", "ow"), coordinate_expressions(y[:-1], "t")
    else:
        names = ("n", "oh", "ow", "k0") if result_layout == "NHWC" else ("n", "k0", "oh", "ow0")
        coordinates = coordinate_expressions(y)
    context = {
        "whole_pixel": whole_pixel,
        "pixel_channels": y[-1],
        "in_storage": in_storage,
        "out_storage": out_storage,
        "converts": converts,
        "count": math.prod(y),
        "vector": vector,
        "index_type": index_type,
        "coordinates": coordinates,
        "names": names,
        "result_layout": result_layout,
        "layout": layout,
        "block": block,
        "channels": c,
        "blocked_channels": c * block * block,
        "height": h,
        "width": w,
        "top": top,
        "left": left,
        "in_shape": x,
        "out_shape": y,
        "source_offset": _source_offset(layout, n, c, h, w),
        "aligned": alignment_check([("out", vector * out_size)]),
    }
    key = (
        f"space_to_depth {elements} in=[{','.join(map(str, x))}] {layout}->{result_layout} block={block} "
        f"pads=[{','.join(map(str, op.prop_value('pads')))}] out=[{','.join(map(str, y))}] "
        f"vector={vector}{' whole-pixel' if whole_pixel else ''} index={index_type}"
    )
    return KernelPlan("space_to_depth", key, "space_to_depth.cu.j2", context)
