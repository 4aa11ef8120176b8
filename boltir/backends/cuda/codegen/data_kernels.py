"""Templated CUDA kernels for the `op` ops that are not GEMMs or convs: the elementwise
family (`op.elementwise`, and `op.unary`, `op.binary`, `op.select`, `op.cast` through the
same generator) and data movement (`op.layout_transform`, `op.pad`, `op.slice`,
`op.concat`, `op.reshape`, `op.gather`, `op.resize`, and `op.space_to_depth` from
`space_to_depth_kernel.py`).

    source = emit_translation_unit(ops)        # one unit, instances deduplicated
    name = kernel_name(op)                     # boltir_pad_1a2b3c4d5e6f: the op's launcher
    pointers = launch_operands(op)             # its SSA values in ABI order
    supports(op), unsupported_reason(op)       # whether (why not) it has a kernel here

One jinja2 template per family lives in `templates/data/` (`common.j2` holds the macros
they share, `boltir_data.h` the device helpers pasted into every unit), in the style of
`emitter.py`. A unit needs the CUDA headers alone (`cuda_runtime.h`, `cuda_fp16.h`,
`cuda_bf16.h`) and compiles with nvcc's sm80 flags (the `boltir.target` sm80 record's, which
also runs on sm_90).

**Instances.** Every shape and attribute is static and baked into the instance: its key
(`instance_key`) is the kernel's parameters as text (family, element type or width, the
shapes after merging axes that move together, the vector width, the body), and ops with
equal keys share one kernel and launcher, `boltir_<family>_<12 hex digits of the key's
SHA-256>`. Data movement copies bits, so its keys name the element width, not the type:
an f16 and a bf16 transpose of one shape share a kernel.

**Launcher ABI.** For every instance `NAME`:

    extern "C" int NAME(const void *in0, ..., const void *inN, void *out, cudaStream_t stream);

the op's operands in order (`launch_operands`: an elementwise op's inputs, a concat's
inputs, gather's data then indices), then its result. Every pointer is a device pointer
to a contiguous row-major tensor of the op's element type (i1 as one byte, 0 or 1); none
may alias the output. The launch is asynchronous on `stream`; nothing is allocated or
synchronized. It returns 0, or 1000 + the `cudaError_t` that `cudaGetLastError()` gives
after the launch. An empty output launches nothing and returns 0.

**Kernels.** One pass over the data, one thread per output element or per vector of
them. Where the innermost extent allows (after merging axes), a thread moves V elements
with one 16-byte access of the widest tensor (8 x f16, 4 x f32), halved until V divides
the extent; the launcher falls back to V = 1 at run time when a pointer is not aligned to
its vector, so any pointer works. The transpose of a layout_transform that changes the
innermost axis goes through 32 x 32 shared-memory tiles.

**Numerics** follow `boltir.interp.op`: elementwise bodies compute f16 and bf16 values in
f32 and round each op's result to its type (what numpy does per op), f32 and f64 in their
own type, without FMA contraction (numpy has none); integers wrap; integer division
truncates, and divides by zero to 0. Resize reads per-axis tables of input positions and
weights computed in Python by the interpreter's own functions, and blends axis by axis as
it does. Gather clamps out-of-range indices (numpy raises).

Element types: elementwise f16, bf16, f32, f64, i1, i8-i64 and ui8-ui64; data movement
any type of 8, 16, 32 or 64 bits (the 8-bit floats included); resize f16, bf16, f32,
f64. Anything else raises a one-line BoltError.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from boltir.backends.cuda.codegen.elementwise_kernels import (
    elementwise_plan,
    float_literal,
)
from boltir.backends.cuda.codegen.generator import (
    Instance,
    LaunchArguments,
    header_text,
    render,
)
from boltir.backends.cuda.codegen.kernel_plan import (
    BIT_STORAGE,
    COMPUTED,
    RESIZE_ELEMENTS,
    KernelPlan,
    affine_expression,
    alignment_check,
    coordinate_expressions,
    element_size,
    empty_plan,
    index_type_for,
    merge_axes,
    row_major_strides,
    static_shape,
    type_name_of,
    unsupported,
    vector_width_for,
)
from boltir.backends.cuda.codegen.space_to_depth_kernel import space_to_depth_plan
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects import resize
from boltir.dialects.shapes import slice_bounds
from boltir.dtypes import numpy_dtype

FAMILIES: dict[type, str] = {
    ops.ElementwiseOp: "elementwise",
    ops.UnaryOp: "elementwise",
    ops.BinaryOp: "elementwise",
    ops.SelectOp: "elementwise",
    ops.CastOp: "elementwise",
    ops.LayoutTransformOp: "layout_transform",
    ops.PadOp: "pad",
    ops.SliceOp: "slice",
    ops.ConcatOp: "concat",
    ops.ReshapeOp: "reshape",
    ops.GatherOp: "gather",
    ops.ResizeOp: "resize",
    ops.SpaceToDepthOp: "space_to_depth",
}


# ------------------------------------------------------------------------ plans


def family(op: Operation) -> str:
    try:
        return FAMILIES[type(op)]
    except KeyError:
        raise BoltError(
            f"'{op.name}' is not an elementwise or data-movement op (data kernels cover {', '.join(sorted({c.name for c in FAMILIES}))})",
            format_location(op.location),
        ) from None


def launch_operands(op: Operation) -> list[SSAValue]:
    """The op's tensors in launcher order: its operands, then its result."""
    family(op)
    return [*op.operands, op.results[0]]



# ----------------------------------------------------------------- data movement


def _copy_context(op: Operation, size: int, extents: list[int], coefficients: list[int], base: int, *shapes) -> dict:
    """A strided copy out[e] = in[base + sum(c_d * k_d)] over the output's (merged) axes."""
    extents, (coefficients,) = merge_axes(extents, [coefficients])
    # a vector needs V consecutive source elements, each vector's first one aligned to V
    vector = vector_width_for(size, extents[-1], base, *coefficients[:-1]) if coefficients[-1] == 1 else 1
    contiguous = coefficients == row_major_strides(extents) and base == 0
    return {
        "storage": BIT_STORAGE[size],
        "bits": 8 * size,
        "count": math.prod(extents),
        "extents": extents,
        "coefficients": coefficients,
        "base": base,
        "vector": vector,
        "index_type": index_type_for(*shapes),
        "coordinates": [] if contiguous else coordinate_expressions(extents),
        "source": "e" if contiguous else affine_expression(base, coefficients),
        "aligned": alignment_check([("in0", vector * size), ("out", vector * size)]),
    }


def _copy_key(kind: str, c: dict, extra: str = "") -> str:
    return (
        f"{kind} bits={c['bits']} extents=[{','.join(map(str, c['extents']))}] "
        f"coefficients=[{','.join(map(str, c['coefficients']))}] base={c['base']}{extra} vector={c['vector']} index={c['index_type']}"
    )


def _reshape_plan(op: ops.ReshapeOp) -> KernelPlan:
    size = element_size(op, op.input)
    count = math.prod(static_shape(op.output))
    if count == 0:
        return empty_plan(op, "reshape")
    c = _copy_context(op, size, [count], [1], 0, static_shape(op.input))
    return KernelPlan("reshape", _copy_key("reshape", c), "reshape.cu.j2", c)


def _slice_plan(op: ops.SliceOp) -> KernelPlan:
    size = element_size(op, op.input)
    x, y = static_shape(op.input), static_shape(op.output)
    if math.prod(y) == 0:
        return empty_plan(op, "slice")
    begins, steps = [0] * len(x), [1] * len(x)
    for start, end, axis, step in zip(*(op.prop_value(n) for n in ("starts", "ends", "axes", "steps")), strict=True):
        axis %= len(x)
        begins[axis], _, steps[axis] = slice_bounds(start, end, step, x[axis])
    strides = row_major_strides(x)
    base = sum(b * s for b, s in zip(begins, strides))
    c = _copy_context(op, size, list(y), [k * s for k, s in zip(steps, strides)], base, x)
    return KernelPlan("slice", _copy_key("slice", c), "slice.cu.j2", c)


def _layout_transform_plan(op: ops.LayoutTransformOp) -> KernelPlan:
    size = element_size(op, op.input)
    x, perm = static_shape(op.input), list(op.prop_value("perm"))
    if math.prod(x) == 0:
        return empty_plan(op, "layout_transform")
    # Merge input axes that stay adjacent and in order in the output (extent-1 axes go).
    kept = [d for d in range(len(x)) if x[d] != 1]
    order = [kept.index(p) for p in perm if x[p] != 1]  # kept input axes, in output order
    groups: list[list[int]] = []
    for a in order:
        if groups and groups[-1][-1] + 1 == a:
            groups[-1].append(a)
        else:
            groups.append([a])
    by_input = sorted(range(len(groups)), key=lambda g: groups[g][0])
    shape = [math.prod(x[kept[a]] for a in groups[g]) for g in by_input]  # merged input axes
    merged_perm = [by_input.index(g) for g in range(len(groups))]  # output axis k = input axis merged_perm[k]
    in_strides = row_major_strides(shape)
    out_extents = [shape[p] for p in merged_perm]
    common = {"shape": shape, "perm": merged_perm, "bits": 8 * size, "storage": BIT_STORAGE[size]}
    if len(shape) <= 1 or merged_perm[-1] == len(shape) - 1:
        c = _copy_context(op, size, out_extents, [in_strides[p] for p in merged_perm], 0, x)
        mode = "copy" if len(shape) <= 1 else "rows"
        key = (
            f"layout_transform bits={8 * size} shape=[{','.join(map(str, shape))}] perm=[{','.join(map(str, merged_perm))}] "
            f"{mode} vector={c['vector']} index={c['index_type']}"
        )
        return KernelPlan("layout_transform", key, "layout_transform.cu.j2", {**c, **common, "mode": mode})
    a, b = len(shape) - 1, merged_perm[-1]  # the input's innermost axis, the output's innermost (as input axes)
    out_strides = row_major_strides(out_extents)
    out_stride_of = {p: out_strides[k] for k, p in enumerate(merged_perm)}
    others = [p for p in merged_perm if p not in (a, b)]  # batch axes, in output order
    index_type = index_type_for(x)
    context = {
        **common,
        "mode": "tiled",
        "count": math.prod(x),
        "index_type": index_type,
        "extent_a": shape[a],
        "extent_b": shape[b],
        "tiles_a": -(-shape[a] // 32),
        "tiles_b": -(-shape[b] // 32),
        "batch": math.prod(shape[p] for p in others),
        "batch_coordinates": coordinate_expressions([shape[p] for p in others], "z", "z") if others else [],
        "in_base": affine_expression(0, [in_strides[p] for p in others], "z") if others else "0",
        "out_base": affine_expression(0, [out_stride_of[p] for p in others], "z") if others else "0",
        "in_stride_b": in_strides[b],
        "out_stride_a": out_stride_of[a],
        "vector": 1,
        "aligned": "true",
    }
    key = f"layout_transform bits={8 * size} shape=[{','.join(map(str, shape))}] perm=[{','.join(map(str, merged_perm))}] tiled index={index_type}"
    return KernelPlan("layout_transform", key, "layout_transform.cu.j2", context)


def _pad_plan(op: ops.PadOp) -> KernelPlan:
    size = element_size(op, op.input)
    x, y = static_shape(op.input), static_shape(op.output)
    mode, pads = op.prop_value("mode"), list(op.prop_value("pads"))
    if math.prod(y) == 0:
        return empty_plan(op, "pad")
    rank = len(x)
    # As the interpreter: negative pads crop first, then the positive ones pad.
    axes = []
    for d in range(rank):
        begin, end = pads[d], pads[d + rank]
        crop = max(0, -begin)
        length = max(0, x[d] - crop - max(0, -end))
        if length == 0 and mode != "constant":
            unsupported(op, f"axis {d} is cropped to nothing (pads {begin} and {end} of {x[d]}): {mode} padding has nothing to repeat")
        axes.append((max(0, begin), crop, length, y[d]))
    # Unpadded, uncropped axes next to each other merge; they map one to one.
    merged: list[tuple[int, int, int, int]] = []
    in_extents: list[int] = []
    for (low, crop, length, out), extent in zip(axes, x):
        plain = low == 0 and crop == 0 and length == out == extent
        if plain and merged and merged[-1][0] == 0 and merged[-1][1] == 0 and merged[-1][2] == merged[-1][3] == in_extents[-1]:
            merged[-1] = (0, 0, merged[-1][2] * out, merged[-1][3] * out)
            in_extents[-1] *= extent
        else:
            merged.append((low, crop, length, out))
            in_extents.append(extent)
    in_strides = row_major_strides(in_extents)
    extents = [m[3] for m in merged]
    mapping = []
    for d, (low, crop, length, out) in enumerate(merged):
        if low == 0 and length == out:  # no padding on this axis: a (cropped) one-to-one map
            mapping.append(f"const Index i{d} = c{d}{f' + {crop}' if crop else ''};")
            continue
        mapping.append(f"Index i{d} = c{d} - {low};")
        if mode == "constant":
            mapping.append(f"inside = inside && i{d} >= 0 && i{d} < {length};")
        elif mode == "edge":
            mapping.append(f"i{d} = i{d} < 0 ? 0 : (i{d} >= {length} ? {length - 1} : i{d});")
        elif mode == "wrap":
            mapping.append(f"i{d} = ((i{d} % {length}) + {length}) % {length};")
        elif length == 1:  # reflect of one element
            mapping.append(f"i{d} = 0;")
        else:  # reflect: period 2 (n - 1), the second half mirrored
            period = 2 * (length - 1)
            mapping.append(f"i{d} = ((i{d} % {period}) + {period}) % {period};")
            mapping.append(f"i{d} = i{d} >= {length} ? {period} - i{d} : i{d};")
        if crop:
            mapping.append(f"i{d} += {crop};")
    low, crop, length, out = merged[-1]
    plain_inner = low == 0 and crop == 0 and length == out == in_extents[-1]
    vector = vector_width_for(size, extents[-1]) if plain_inner else 1
    with np.errstate(all="ignore"):
        bits = int(np.asarray(op.prop_value("value")).astype(numpy_dtype(op.input.type.element_type)).reshape(1).view(f"u{size}")[0])
    value_literal = f"{bits}{'ULL' if size == 8 else 'u'}"
    index_type = index_type_for(x, y)
    context = {
        "mode": mode, "bits": 8 * size, "storage": BIT_STORAGE[size], "in_shape": x, "out_shape": y,
        "value_bits": bits, "value_literal": value_literal, "count": math.prod(y), "vector": vector,
        "index_type": index_type, "coordinates": coordinate_expressions(extents), "mapping": mapping,
        "source": affine_expression(0, in_strides, "i"),
        "aligned": alignment_check([("in0", vector * size), ("out", vector * size)]),
    }
    described = ",".join(f"{lo}/{cr}/{n}/{o}" for lo, cr, n, o in merged)
    key = (
        f"pad bits={8 * size} mode={mode} axes=[{described}] (low/crop/length/out)"
        + (f" value=0x{bits:x}" if mode == "constant" else "")
        + f" vector={vector} index={index_type}"
    )
    return KernelPlan("pad", key, "pad.cu.j2", context)


def _concat_plan(op: ops.ConcatOp) -> KernelPlan:
    size = element_size(op, op.output)
    y = static_shape(op.output)
    if math.prod(y) == 0:
        return empty_plan(op, "concat")
    axis = op.prop_value("axis") % len(y)
    outer, inner = math.prod(y[:axis]), math.prod(y[axis + 1 :])
    pieces, start = [], 0
    for i, value in enumerate(op.inputs):
        columns = static_shape(value)[axis] * inner
        if columns:  # an empty input contributes nothing (its pointer is not read)
            pieces.append({"input": i, "start": start, "end": start + columns, "columns": columns})
        start += columns
    vector = vector_width_for(size, *(p["columns"] for p in pieces))
    index_type = index_type_for(y)
    context = {
        "bits": 8 * size, "storage": BIT_STORAGE[size], "inputs": len(op.inputs), "pieces": pieces, "outer": outer,
        "columns": start, "count": math.prod(y), "vector": vector, "index_type": index_type,
        "aligned": alignment_check([(f"in{p['input']}", vector * size) for p in pieces] + [("out", vector * size)]),
        "kernel_arguments": ", ".join([f"static_cast<const S *>(in{i})" for i in range(len(op.inputs))] + ["static_cast<S *>(out)"]),
    }
    key = (
        f"concat bits={8 * size} inputs={len(op.inputs)} outer={outer} "
        f"columns=[{','.join(str(static_shape(v)[axis] * inner) for v in op.inputs)}] vector={vector} index={index_type}"
    )
    return KernelPlan("concat", key, "concat.cu.j2", context)


def _gather_plan(op: ops.GatherOp) -> KernelPlan:
    size = element_size(op, op.data)
    x, y = static_shape(op.data), static_shape(op.output)
    if math.prod(y) == 0:
        return empty_plan(op, "gather")
    axis = op.prop_value("axis") % len(x)
    outer, extent, inner = math.prod(x[:axis]), x[axis], math.prod(x[axis + 1 :])
    positions = math.prod(static_shape(op.indices))
    index_element = type_name_of(op.indices)
    vector = vector_width_for(size, inner)
    index_type = index_type_for(x, y)
    context = {
        "bits": 8 * size, "storage": BIT_STORAGE[size], "index_element": index_element,
        "index_storage": "int32_t" if index_element == "i32" else "int64_t", "outer": outer, "extent": extent,
        "inner": inner, "positions": positions, "count": math.prod(y), "vector": vector, "index_type": index_type,
        "aligned": alignment_check([("in0", vector * size), ("out", vector * size)]),
    }
    key = (
        f"gather bits={8 * size} indices={index_element} outer={outer} extent={extent} positions={positions} "
        f"inner={inner} vector={vector} index={index_type}"
    )
    return KernelPlan("gather", key, "gather.cu.j2", context)


def _resize_tables(op: ops.ResizeOp, reg: str) -> list[dict]:
    """Per resized axis, what `graph.resize` computes (`boltir.dialects.resize`) for it: the input positions
    each output position reads, their weights, and (tf_crop_and_resize) whether it lies
    outside the input, taken from the interpreter's own functions."""
    x, y = static_shape(op.input), static_shape(op.output)
    rank = len(x)
    mode, coordinate_mode = op.prop_value("mode"), op.prop_value("coordinate_transformation_mode")
    roi = op.prop_value("roi") or None
    weight_dtype = np.float32 if reg == "float" else np.float64
    tables = []
    for axis, (in_len, out_len, scale) in enumerate(zip(x, y, op.prop_value("scales"), strict=True)):
        if in_len == out_len and scale == 1.0 and coordinate_mode != "tf_crop_and_resize":
            continue  # the interpreter skips it too
        axis_roi = (roi[axis], roi[axis + rank]) if roi else (0.0, 1.0)
        coords = resize.source_coordinates(out_len, in_len, scale, coordinate_mode, axis_roi)
        if mode == "nearest":
            index, weight = resize.nearest_indices(coords, op.prop_value("nearest_mode"), in_len)[:, None], None
        else:
            index, weight = resize.interpolation_taps(
                coords, in_len, mode, op.prop_value("cubic_coeff_a"), bool(op.prop_value("exclude_outside"))
            )
            weight = weight.astype(weight_dtype)
        outside = ((coords < 0) | (coords > in_len - 1)) if coordinate_mode == "tf_crop_and_resize" else None
        tables.append({
            "axis": axis,
            "taps": index.shape[1],
            "index": [int(i) for i in index.reshape(-1)],
            "weight": [float_literal(float(w), reg) for w in weight.reshape(-1)] if weight is not None else [],
            "outside": [int(o) for o in outside] if outside is not None and outside.any() else [],
        })
    return tables


def _interpolation_body(tables: list[dict], in_strides: list[int]) -> list[str]:
    """The statements that blend the taps of every resized axis. acc_k blends axes 0..k,
    innermost loop first: the interpreter's axis-by-axis order, each tap added as
    sum = sum + value * weight."""

    def level(k: int, offset: str, indent: str) -> list[str]:
        if k < 0:
            return [f"{indent}const boltir_data::Vec<S, V> p = boltir_data::load<V>(in, {offset});"]
        t = tables[k]
        axis, taps = t["axis"], t["taps"]
        lines = [
            f"{indent}R acc{k}[V] = {{}};",
            "#pragma unroll",
            f"{indent}for (int t{k} = 0; t{k} < {taps}; ++t{k}) {{",
            f"{indent}  const Index o{k} = {offset} + Index(kIndex{k}[c{axis} * {taps} + t{k}]) * {in_strides[axis]};",
            f"{indent}  const R w{k} = kWeight{k}[c{axis} * {taps} + t{k}];",
        ]
        lines += level(k - 1, f"o{k}", indent + "  ")
        inner_value = "boltir_data::to_reg(p.v[j])" if k == 0 else f"acc{k - 1}[j]"
        lines += [
            "#pragma unroll",
            f"{indent}  for (int j = 0; j < V; ++j) {{",
            f"{indent}    acc{k}[j] = boltir_data::add_rn(acc{k}[j], boltir_data::mul_rn({inner_value}, w{k}));",
            f"{indent}  }}",
            f"{indent}}}",
        ]
        return lines

    last = len(tables) - 1
    return [
        *level(last, "base", ""),
        "boltir_data::Vec<S, V> y;",
        "#pragma unroll",
        "for (int j = 0; j < V; ++j) {",
        f"  y.v[j] = boltir_data::from_reg<S>(acc{last}[j]);",
        "}",
        "boltir_data::store<V>(out, e, y);",
    ]


def _resize_plan(op: ops.ResizeOp) -> KernelPlan:
    name = type_name_of(op.input)
    if name not in RESIZE_ELEMENTS:
        unsupported(op, f"resize takes {', '.join(RESIZE_ELEMENTS)}, got {name}")
    element = COMPUTED[name]
    x, y = static_shape(op.input), static_shape(op.output)
    if math.prod(y) == 0:
        return empty_plan(op, "resize")
    tables = _resize_tables(op, element.reg)
    resized = {t["axis"]: (k, t) for k, t in enumerate(tables)}
    rank = len(x)
    vector = 1 if (rank - 1) in resized else vector_width_for(element.size, y[-1])
    in_strides = row_major_strides(x)
    base = affine_expression(0, [0 if d in resized else in_strides[d] for d in range(rank)])
    mode = op.prop_value("mode")
    body: list[str] = [f"const Index base = {base};"]
    outside = [f"kOutside{k}[c{t['axis']}]" for k, t in enumerate(tables) if t["outside"]]
    if outside:
        extrapolation = float_literal(float(np.float32(op.prop_value("extrapolation_value"))), element.reg)
        body += [
            f"if ({' | '.join(outside)}) {{  // tf_crop_and_resize outside the input",
            f"  boltir_data::store<V>(out, e, boltir_data::splat<V>(boltir_data::from_reg<S>(R({extrapolation}))));",
            "  return;",
            "}",
        ]
    if mode == "nearest" or not tables:
        offset = " + ".join(["base"] + [f"Index(kIndex{k}[c{t['axis']}]) * {in_strides[t['axis']]}" for k, t in enumerate(tables)])
        body.append(f"boltir_data::store<V>(out, e, boltir_data::load<V>(in, {offset}));  // a copy: no arithmetic")
    else:
        body += _interpolation_body(tables, in_strides)
    index_type = index_type_for(x, y)
    properties = [
        f"{p}={op.prop_value(p)}"
        for p in ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "roi",
                  "extrapolation_value", "scales")
    ]
    key = (
        f"resize {name} in=[{','.join(map(str, x))}] out=[{','.join(map(str, y))}] {' '.join(properties)} "
        f"vector={vector} index={index_type}"
    )
    context = {
        "element": name, "storage": element.storage, "reg": element.reg, "in_shape": x, "out_shape": y, "mode": mode,
        "coordinate_mode": op.prop_value("coordinate_transformation_mode"), "axes": tables, "count": math.prod(y),
        "vector": vector, "index_type": index_type, "coordinates": coordinate_expressions(y) if y else [], "body": body,
        "aligned": alignment_check([("in0", vector * element.size), ("out", vector * element.size)]),
    }
    return KernelPlan("resize", key, "resize.cu.j2", context)


PLANS: dict[str, Callable[[Operation], KernelPlan]] = {
    "elementwise": elementwise_plan,
    "layout_transform": _layout_transform_plan,
    "pad": _pad_plan,
    "slice": _slice_plan,
    "concat": _concat_plan,
    "reshape": _reshape_plan,
    "gather": _gather_plan,
    "resize": _resize_plan,
    "space_to_depth": space_to_depth_plan,
}


def _plan(op: Operation) -> KernelPlan:
    return PLANS[family(op)](op)


# --------------------------------------------------------------------- public API


def instance_key(op: Operation) -> str:
    """The kernel's parameters as canonical text: ops with equal keys share one kernel."""
    return _plan(op).key


def _name_for(plan: KernelPlan) -> str:
    return f"boltir_{plan.family}_{hashlib.sha256(plan.key.encode()).hexdigest()[:12]}"


def kernel_name(op: Operation) -> str:
    """The name of the op's `extern "C"` launcher."""
    return _name_for(_plan(op))


def unsupported_reason(op: Operation) -> str | None:
    """Why `op` has no kernel here, as a sentence; None when it has one."""
    try:
        _plan(op)
    except BoltError as error:
        return error.message
    return None


def is_fallback(op: Operation) -> bool:
    """Data kernels are never stand-ins: each is the kernel for its op."""
    return False


def launch_arguments(op: Operation) -> LaunchArguments:
    """The launcher's name and pointer operands (these launchers take no problem sizes)."""
    return LaunchArguments(kernel_name(op), tuple(launch_operands(op)))


def supports(op: Operation) -> bool:
    return unsupported_reason(op) is None


def emit_instance(op: Operation) -> Instance:
    """One op's kernel and launcher (raises BoltError when it has none)."""
    plan = _plan(op)
    return _render(plan, _name_for(plan))


def _render(plan: KernelPlan, name: str) -> Instance:
    source = render("data/" + plan.template, name=name, key=plan.key, **plan.context)
    return Instance(name, plan.key, plan.family, source.rstrip("\n"))


def data_ops(module_or_ops: ModuleOp | Iterable[Operation]) -> list[Operation]:
    """The ops of a module this module has kernels for (in order), or the given ops."""
    if isinstance(module_or_ops, ModuleOp):
        return [op for op in module_or_ops.walk() if type(op) in FAMILIES]
    return list(module_or_ops)


def emit_translation_unit(module_or_ops: ModuleOp | Iterable[Operation]) -> str:
    """The CUDA source for every distinct instance among the ops (first-use order):
    includes, boltir_data.h, then each instance."""
    instances: dict[str, Instance] = {}
    for op in data_ops(module_or_ops):
        plan = _plan(op)
        if (name := _name_for(plan)) not in instances:
            instances[name] = _render(plan, name)
    prelude = header_text("data/boltir_data.h")
    return render("data/translation_unit.cu.j2", instances=list(instances.values()), prelude=prelude)
