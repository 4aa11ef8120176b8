"""The CUDA emitter: `cutlass` ops to one translation unit of CUTLASS template instances,
each with an `extern "C"` launcher: 2.x (Sm80, mma.sync) for `arch = "sm80"`, 3.x (sm_90a:
wgmma, TMA; `cutlass_sm90.py`) for `arch = "sm90"`. A unit with a 3.x instance compiles for
sm_90a only (`kernel_arch`).

    source = emit_translation_unit(module)     # or a list of cutlass ops
    name = kernel_name(op)                     # boltir_gemm_1a2b3c4d5e6f: the op's launcher
    reason = unsupported_reason(op)            # None, or why the op has no CUTLASS instance

`bolt-opt x.mlir -t cuda` prints the unit. One template per family lives in `templates/`
(jinja2); `templates/boltir_epilogue.h` (boltir's activation functors) is pasted into the
unit, so it compiles with the CUTLASS include paths alone: `include/` and, for the
back-to-back families, `examples/13_two_tensor_op_fusion/` of the nvidia-cutlass wheel.

**Instances.** `instance_key(op)` is the op's template parameters as text (family, element
types, layouts, tiles, stages, swizzle, alignments, split-k, iterator, residency, the
epilogue with its constants, and how a batched GEMM broadcasts), never the problem size;
ops with one key share one kernel and one launcher, `boltir_<family>_<12 hex digits of the
key's SHA-256>`.

**Launcher ABI.** Every pointer is a device pointer, in the op's layout, contiguous, and
aligned to at least 16 bytes; element types are the op's. Every launcher returns an
`int`: 0 on success, else an error code that `const char *boltir_error_string(int)`
describes: 1-99 a `cutlass::Status` (e.g. 1 misaligned operand, 4 invalid problem, 7
internal: a failed launch), 1000 + e a `cudaError_t` e, 2001 a missing or short workspace,
2002 a problem size the instance cannot run, 2003 a null bias or residual that the
epilogue reads. Nullable operands are ignored (and may be null) when the op has none.
Every launcher `NAME` has `size_t NAME_workspace_size(<the problem arguments>)`; pass a
device buffer of at least that many bytes (or null when it is 0). All launches are
asynchronous on `stream`; nothing is allocated or synchronized.

- GEMM (`cutlass.gemm`):

      int NAME(const void *a, const void *b, const void *bias, const void *residual, void *d,
               int batch, int m, int n, int k, void *workspace, size_t workspace_bytes,
               cudaStream_t stream);
      size_t NAME_workspace_size(int batch, int m, int n, int k);

  A is m×k row-major ("row") or k×m row-major ("col"), B is k×n row-major ("row") or n×k
  row-major ("col", a Linear weight); D and the residual are [batch, m, n] row-major; the
  bias has n elements. `batch` is the product of the output's leading dimensions (1 for a
  plain GEMM); an operand with leading dimensions advances by m×k (k×n) per batch, one
  without is shared by all. Serial split-k needs a workspace (its semaphores).
- conv2d fprop and depthwise conv2d fprop (`cutlass.conv2d_fprop`,
  `cutlass.depthwise_conv2d_fprop`):

      int NAME(const void *input, const void *filter, const void *bias, const void *residual,
               void *output, int n, int h, int w, int c, int k, int r, int s, int p, int q,
               int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h, int dilation_w,
               void *workspace, size_t workspace_bytes, cudaStream_t stream);
      size_t NAME_workspace_size(<the same 15 ints>);

  Input NHWC (n×h×w×c), filter KRSC (k×r×s×c; depthwise: k×r×s×1 with k = c), output and
  residual NPQK, bias k. `pad_h`/`pad_w` are the top and left pads (the bottom and right
  ones follow from p and q). The depthwise conv needs a workspace of k×r×s elements (the
  filter reordered for the direct convolution); split-k convs need one for semaphores.
- back-to-back GEMM (`cutlass.b2b_gemm`): `D = epi1(epi0(A @ B0) @ B1)`

      int NAME(const void *a, const void *b0, const void *b1, const void *bias0,
               const void *bias1, void *d, int m0, int n0, int k0, int m1, int n1, int k1,
               void *workspace, size_t workspace_bytes, cudaStream_t stream);

  The two problem sizes: A m0×k0 row-major (leading batch dimensions folded into m0), B0
  n0×k0, B1 n1×k1 row-major (both "col"), with m1 = m0 and k1 = n0; bias0 n0, bias1 n1.
- back-to-back conv (`cutlass.b2b_conv2d`): a conv, then a 1×1 stride-1 conv of its output

      int NAME(const void *input, const void *filter0, const void *filter1, const void *bias0,
               const void *bias1, void *output, int n, int h, int w, int c, int k0, int r,
               int s, int p, int q, int pad_h, int pad_w, int stride_h, int stride_w,
               int dilation_h, int dilation_w, int k1, void *workspace,
               size_t workspace_bytes, cudaStream_t stream);

  The first problem is the conv's (filter0 k0×r×s×c), the second is n×p×q×k0 → k1
  (filter1 k1×1×1×k0).

**Numerics.** A, B and the output share one element type: f16 or bf16 with f32
accumulation, or f32 through TF32 tensor ops (`OpMultiplyAdd` on float operands). The
epilogue runs in f32 and rounds once to the output type (see `epilogues.py` for how each
`#op.epilogue` maps onto CUTLASS). Serial split-k keeps each slice's partial sum in the
output tensor, so it rounds to the output type between slices.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.target import Target

from boltir.backends.cuda.codegen import cutlass_sm90
from boltir.backends.cuda.codegen.cutlass_common import (
    FAMILIES,
    batch_layout,
    check_bias,
    check_elements,
    depthwise_output_tile,
    describe_epilogue,
    element_name,
    family,
    gemm_batching,
)
from boltir.backends.cuda.codegen.epilogues import (
    EpiloguePlan,
    Functor,
    f32_literal,
    plan_epilogue,
    plan_problem,
)
from boltir.backends.cuda.codegen.generator import (
    Instance,
    LaunchArguments,
    header_text,
    render,
)
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import cutlass
from boltir.dialects.graph import tensor_shape
from boltir.dialects.op import EpilogueAttr

CUTLASS_ELEMENTS = {"f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t", "f32": "float"}
TENSOR_OP_INSTRUCTIONS = {"f16": (16, 8, 16), "bf16": (16, 8, 16), "f32": (16, 8, 8)}
"""The Sm80 mma.sync shapes: f16/bf16 m16n8k16, tf32 m16n8k8."""

ITERATORS = {
    "analytic": "kAnalytic",
    "optimized": "kOptimized",
    "fixed_channels": "kFixedChannels",
    "few_channels": "kFewChannels",
}

HEADERS = {
    "gemm": ("cutlass/gemm/device/gemm_universal.h", "cutlass/gemm/device/gemm_universal_with_broadcast.h",
             "cutlass/epilogue/thread/linear_combination_residual_block.h"),
    "conv2d_fprop": ("cutlass/conv/kernel/default_conv2d_fprop.h", "cutlass/conv/kernel/default_conv2d_fprop_with_broadcast.h",
                     "cutlass/conv/device/implicit_gemm_convolution.h",
                     "cutlass/epilogue/thread/linear_combination_residual_block.h"),
    "depthwise_conv2d_fprop": ("cutlass/conv/kernel/default_depthwise_fprop.h", "cutlass/conv/device/direct_convolution.h"),
    "b2b_gemm": ("device/b2b_gemm.h",),
    "b2b_conv2d": ("device/b2b_implicit_gemm_convolution.h",),
}
"""The headers each family's instances need (the b2b ones from example 13's directory)."""



# ------------------------------------------------------------------------ helpers








def _epilogue_text(epilogue: EpilogueAttr) -> str:
    """The epilogue as a formula, for the generated comments."""
    e = epilogue
    alpha, beta = e.alpha.value.data, e.beta.value.data
    x = "acc" if alpha == 1.0 else f"{alpha!r} * acc"
    if e.has_bias:
        x = f"{x} + {'bias' if beta == 1.0 else f'{beta!r} * bias'}"
    first, second = e.first_activation, e.second_activation
    if first.kind != "none":
        x = f"{first}({x})"
    if e.residual_kind != "none":
        x = f"{x} {'+' if e.residual_kind == 'add' else '*'} residual"
    if second.kind != "none":
        x = f"{second}({x})"
    return x








# ------------------------------------------------------------------- instance keys


def instance_key(op: Operation) -> str:
    """The op's template parameters as canonical text: ops with equal keys share one kernel
    and one launcher. Problem sizes are left out (they are launcher arguments), except
    where the template fixes them (a depthwise conv's filter size)."""
    kind = family(op)
    tile = op.tile.value
    items = [
        kind,
        f"arch={op.prop_value('arch')}",
        f"op_class={op.prop_value('op_class')}",
    ]
    if kind in ("gemm", "b2b_gemm"):
        operands = (op.a, op.b) if kind == "gemm" else (op.a, op.b0, op.b1)
    elif kind in ("conv2d_fprop", "depthwise_conv2d_fprop"):
        operands = (op.input, op.filter)
    else:
        operands = (op.input, op.filter0, op.filter1)
    items.append("elements=" + ",".join(element_name(v) for v in (*operands, op.output)))
    items.append(f"accumulator={op.accumulator}")
    items.append(
        f"tile={'x'.join(map(str, tile.threadblock))}/{'x'.join(map(str, tile.warp))}/"
        f"{'x'.join(map(str, tile.instruction))}/s{tile.stages}"
    )
    items.append(f"swizzle={op.prop_value('swizzle')}")
    items.append("alignment=" + ",".join(map(str, op.prop_value("alignment"))))
    if op.prop_value("arch") == "sm90":
        items.append("cluster=" + "x".join(map(str, cutlass_sm90.cluster_of(op))))
        items.append(f"schedule={cutlass_sm90.schedule_of(op)}")
    if kind == "gemm":
        items.append(f"layouts={op.prop_value('layout_a')},{op.prop_value('layout_b')}")
        items.append(f"split_k={op.prop_value('split_k')}")
        layout = batch_layout(op)
        items.append(f"batch={layout[0] if isinstance(layout, tuple) else 'unsupported'}")
    if kind == "conv2d_fprop":
        items.append(f"iterator={op.prop_value('iterator_algorithm')}")
        items.append(f"split_k={op.prop_value('split_k')}")
    if kind == "depthwise_conv2d_fprop":
        _, r, s, _ = tensor_shape(op.filter.type)
        items.append(f"filter={r}x{s}")
    if kind in ("b2b_gemm", "b2b_conv2d"):
        tile1 = op.tile1.value
        items.append(
            f"tile1={'x'.join(map(str, tile1.threadblock))}/{'x'.join(map(str, tile1.warp))}/"
            f"{'x'.join(map(str, tile1.instruction))}/s{tile1.stages}"
        )
        items.append(f"residency={op.prop_value('residency')}")
        items.append(f"epilogue0={describe_epilogue(op.epilogue0)}")
        items.append(f"epilogue1={describe_epilogue(op.epilogue1)}")
    else:
        items.append(f"epilogue={describe_epilogue(op.epilogue)}")
    return " ".join(items)


def kernel_name(op: Operation) -> str:
    """The name of the op's `extern "C"` launcher (its workspace query adds
    `_workspace_size`)."""
    digest = hashlib.sha256(instance_key(op).encode()).hexdigest()[:12]
    return f"boltir_{family(op)}_{digest}"


# ------------------------------------------------------------------ what is supported




MIXED_EPILOGUE_WARP_N = (32, 64)
"""The warp tile N that CUTLASS's f32-to-f16 epilogue (`TileIteratorTensorOpMixed`, used for
f16 outputs written 8 at a time from f32 accumulators) stores correctly. With nvcc >= 11.2
its pointer selection is written for warp tiles of 32 or 64 columns (the `kN == 64` and
`kN32_optimization` paths of `tile_iterator_tensor_op_mixed.h`); wider warp tiles are
refused rather than trusted (read from the header, not measured)."""


def _check_tensor_op(op: Operation, element: str, accumulators: tuple[str, ...] = ("f32",), epilogue_warp_n: int | None = None) -> str | None:
    if op.prop_value("op_class") != "tensorop":
        return f"{family(op)} instances are tensor-op kernels (op_class = \"tensorop\"), got \"{op.prop_value('op_class')}\""
    accumulator = str(op.accumulator)
    if accumulator not in accumulators:
        return f"the accumulator must be {' or '.join(accumulators)}, got {accumulator}"
    warp_n = op.tile.value.warp[1] if epilogue_warp_n is None else epilogue_warp_n
    if element == "f16" and accumulator == "f32" and op.prop_value("alignment")[2] == 8 and warp_n not in MIXED_EPILOGUE_WARP_N:
        return (
            f"CUTLASS's f32-to-f16 epilogue (TileIteratorTensorOpMixed, C alignment 8) stores warp tiles of N = 32 or 64 "
            f"only; this one's N is {warp_n} (use a narrower warp tile{', or f16 accumulation' if len(accumulators) > 1 else ''})"
        )
    instruction = op.tile.value.instruction
    if instruction != TENSOR_OP_INSTRUCTIONS[element]:
        expected = list(TENSOR_OP_INSTRUCTIONS[element])
        return f"the Sm80 {element} tensor-op instruction shape is {expected}, got {list(instruction)}"
    bits = cutlass.element_bits(op.output.type.element_type)
    align_a, align_b, _ = op.prop_value("alignment")
    if min(align_a, align_b) * bits < 32:
        return (
            f"the A and B alignments ({align_a}, {align_b} elements of {bits} bits) must be at least 32 bits: "
            "Sm80's cp.async copies 4, 8 or 16 bytes"
        )
    return None




def unsupported_reason(op: Operation) -> str | None:
    """Why `op` has no CUTLASS 2.x instance here, as a sentence; None when it has one.
    The lowering keeps such an op out of the cutlass dialect."""
    try:
        kind = family(op)
    except ValueError as error:
        return str(error)
    if op.prop_value("arch") == "sm90":
        return cutlass_sm90.unsupported_reason(op)
    if kind == "gemm":
        return _gemm_reason(op)
    if kind == "conv2d_fprop":
        return _conv_reason(op)
    if kind == "depthwise_conv2d_fprop":
        return _depthwise_reason(op)
    return _b2b_reason(op)


def _epilogue_reason(op: Operation, split_k: int) -> str | None:
    if (problem := plan_problem(op.epilogue)) is not None:
        return problem
    plan = plan_epilogue(op.epilogue)
    if plan.kind == "residual_block" and split_k > 1:
        return (
            f"split-k ({split_k} slices) cannot run a residual epilogue ({describe_epilogue(op.epilogue)}): CUTLASS's "
            "residual block applies the activation on every slice; use split_k = 1"
        )
    return check_bias(op.bias, op.output)


def _gemm_reason(op: cutlass.GemmOp) -> str | None:
    if (reason := check_elements(op, (op.a, op.b), ("f16", "bf16", "f32"))) is not None:
        return reason
    if (reason := _check_tensor_op(op, element_name(op.a))) is not None:
        return reason
    layout = batch_layout(op)
    if isinstance(layout, str):
        return layout
    split_k = op.prop_value("split_k")
    batching = gemm_batching(op)
    if split_k > 1 and batching["batched"]:
        return (
            f"split-k ({split_k} slices) and a strided batch ({batching['batch_mode']} batched) do not combine "
            "in GemmUniversal; use split_k = 1"
        )
    return _epilogue_reason(op, split_k)


def _conv_reason(op: cutlass.Conv2dFpropOp) -> str | None:
    if (reason := check_elements(op, (op.input, op.filter), ("f16", "bf16", "f32"))) is not None:
        return reason
    if (reason := _check_tensor_op(op, element_name(op.input))) is not None:
        return reason
    _, r, s, _ = tensor_shape(op.filter.type)
    if op.prop_value("iterator_algorithm") == "optimized" and (r > 32 or s > 32):
        return f"the optimized iterator takes filters of at most 32 x 32, got {r} x {s}; use the analytic one"
    return _epilogue_reason(op, op.prop_value("split_k"))


DEPTHWISE_WARP_SHAPES = frozenset({(4, 4), (4, 2), (4, 1), (8, 1), (8, 2), (8, 4), (16, 1), (16, 2), (16, 4),
                                    (25, 1), (32, 1), (32, 2), (32, 4)})
"""(warp tile M, threads along M) pairs CUTLASS's direct depthwise conv specializes
`SimtWarpShape` for (conv/threadblock/depthwise_mma_core_with_lane_access_size.h); any
other pair fails to compile ("SimtWarpShape<16, 8> has no member kP")."""


def _depthwise_warp_reason(warp: tuple[int, int, int]) -> str | None:
    """The direct conv spreads a warp's 32 threads over its channels two groups per thread
    (min(N / 2, 32) threads along N) and the rest over its output pixels."""
    threads_n = min(warp[1] // 2, 32)
    if threads_n < 1 or 32 % threads_n or warp[1] % threads_n:
        return f"the depthwise warp tile's N ({warp[1]}) must be 2 to 64 channels in a power of two"
    threads_m = 32 // threads_n
    if warp[0] % threads_m or (warp[0], threads_m) not in DEPTHWISE_WARP_SHAPES:
        return (f"CUTLASS's direct depthwise conv has no SimtWarpShape<{warp[0]}, {threads_m}> for a {warp[0]} x {warp[1]} "
                f"warp tile ({threads_m} threads along its pixels): use at least 16 channels per warp")
    return None


def _depthwise_reason(op: cutlass.DepthwiseConv2dFpropOp) -> str | None:
    if (reason := check_elements(op, (op.input, op.filter), ("f16", "bf16", "f32"))) is not None:
        return reason
    element = element_name(op.input)
    if op.prop_value("op_class") != "simt":
        return f"the depthwise direct convolution is a SIMT kernel (op_class = \"simt\"), got \"{op.prop_value('op_class')}\""
    if str(op.accumulator) not in ("f32", element):
        return f"the accumulator must be f32 or {element}, got {op.accumulator}"
    tile = op.tile.value
    _, r, s, _ = tensor_shape(op.filter.type)
    if tile.instruction != (1, 1, 1):
        return f"the SIMT instruction shape is [1, 1, 1], got {list(tile.instruction)}"
    if tile.threadblock[2] != r * s or tile.warp[2] != r * s:
        return (
            f"the threadblock and warp tiles' K ({tile.threadblock[2]}, {tile.warp[2]}) must be the filter's "
            f"taps ({r} x {s} = {r * s})"
        )
    if tile.warp[1] != tile.threadblock[1]:
        return f"one warp covers all of a threadblock's channels: the warp tile's N ({tile.warp[1]}) must be the threadblock's ({tile.threadblock[1]})"
    if (reason := _depthwise_warp_reason(tile.warp)) is not None:
        return reason
    vector = 128 // cutlass.element_bits(op.input.type.element_type)
    align_a, align_b, align_c = op.prop_value("alignment")
    if align_a != vector or align_b != vector:
        return f"the direct convolution reads 128-bit vectors: the A and B alignment must be {vector}, got {align_a} and {align_b}"
    channels = tensor_shape(op.input.type)[3]
    if channels % vector:
        return f"the channels ({channels}) must be a multiple of {vector} (128-bit vectors)"
    if tile.threadblock[1] % align_c:
        return f"the C alignment ({align_c}) must divide the threadblock's channels ({tile.threadblock[1]})"
    # The epilogue stages the accumulators in the shared memory of one stage's activation
    # tile (DepthwiseFpropDirectConvMultipleStage): a larger accumulator tile overwrites
    # the next stage's activations.
    h, w = depthwise_output_tile(tile.threadblock[0])
    strides, dilations = op.prop_value("strides"), op.prop_value("dilations")
    input_bits = cutlass.element_bits(op.input.type.element_type)
    activation_bytes = ((h - 1) * strides[0] + (r - 1) * dilations[0] + 1) * ((w - 1) * strides[1] + (s - 1) * dilations[1] + 1) * tile.threadblock[1] * input_bits // 8
    accumulator_bytes = h * w * tile.threadblock[1] * cutlass.element_bits(op.accumulator) // 8
    if accumulator_bytes > activation_bytes:
        return (
            f"the direct convolution stages its {op.accumulator} accumulators ({h} x {w} x {tile.threadblock[1]}, "
            f"{accumulator_bytes} bytes) in the shared memory of one activation tile ({activation_bytes} bytes), "
            f"which they would overflow: accumulate in {element} or use a smaller output tile"
        )
    if (problem := plan_problem(op.epilogue)) is not None:
        return problem
    plan = plan_epilogue(op.epilogue)
    if plan.kind != "linear":
        return (
            f"the direct depthwise convolution's epilogue reads one source tensor; {describe_epilogue(op.epilogue)} needs a "
            "bias and a residual, or an activation before the residual (only residual = add alone, with no bias "
            "and no first activation, fits)"
        )
    return check_bias(op.bias, op.output)


def _b2b_reason(op: cutlass.B2bGemmOp | cutlass.B2bConv2dOp) -> str | None:
    kind = family(op)
    inputs = (op.a, op.b0, op.b1) if kind == "b2b_gemm" else (op.input, op.filter0, op.filter1)
    if (reason := check_elements(op, inputs, ("f16",))) is not None:
        return reason
    tile0, tile1 = op.tile.value, op.tile1.value
    # example 13 itself accumulates in f16; the second GEMM's epilogue writes the output
    if (reason := _check_tensor_op(op, "f16", ("f32", "f16"), epilogue_warp_n=tile1.warp[1])) is not None:
        return reason
    if tile1.instruction != tile0.instruction:
        return f"both GEMMs use one instruction shape; tile1's is {list(tile1.instruction)}, tile's {list(tile0.instruction)}"
    if tile1.stages != tile0.stages:
        return f"example 13's kernels take one stage count for both GEMMs; tile has {tile0.stages}, tile1 {tile1.stages}"
    if tile0.warps != tile1.warps:
        return f"both GEMMs run on the same threadblock: tile has {tile0.warps} warps, tile1 {tile1.warps}"
    n0, n1 = tile0.threadblock[1], tensor_shape(op.output.type)[-1]
    if n0 % tile1.threadblock[2]:
        return (f"the second GEMM reads the intermediate in K steps of {tile1.threadblock[2]}, which must divide N0 ({n0}) "
                "(with N0 = 16 and steps of 32 the kernel reads past the intermediate)")
    if tile1.threadblock[1] != n1:
        return f"the second tile's N ({tile1.threadblock[1]}) must be N1 ({n1}): narrower outputs are not covered by the GPU checks"
    if op.prop_value("residency") == "register" and tile1.warp[0] != tile0.warp[0]:
        return f"register-file residency needs both warp tiles to have the same M ({tile0.warp[0]} and {tile1.warp[0]})"
    align_a, align_b, align_c = op.prop_value("alignment")
    if kind == "b2b_conv2d" and (align_a, align_b, align_c) != (8, 8, 8):
        return f"example 13's conv kernels access 128 bits at a time: the alignment must be (8, 8, 8), got ({align_a}, {align_b}, {align_c})"
    if kind == "b2b_gemm":
        for value, what in ((op.b0, "B0"), (op.b1, "B1")):
            if len(tensor_shape(value.type)) != 2:
                return f"{what} must be a matrix (rank 2): example 13's B2bGemm takes no batch of weights"
        a = tensor_shape(op.a.type)
        m = 1
        for d in a[:-1]:
            m *= d
        n0, k0 = tensor_shape(op.b0.type)
        n1, _ = tensor_shape(op.b1.type)
        # B2bGemm::can_implement: every extent a multiple of the A, B and C alignments
        for extent, what in ((m, "M"), (k0, "K0"), (n0, "N0"), (n1, "N1")):
            for alignment in (align_a, align_b, align_c):
                if extent % alignment:
                    return f"{what} ({extent}) must be a multiple of the alignments ({align_a}, {align_b}, {align_c})"
    else:
        c = tensor_shape(op.input.type)[3]
        k0, r, s, _ = tensor_shape(op.filter0.type)
        k1 = tensor_shape(op.filter1.type)[0]
        for extent, what in ((c, "C"), (k0, "K0"), (k1, "K1")):
            if extent % 8:
                return f"{what} ({extent}) must be a multiple of 8"
        if r > 32 or s > 32:
            return f"the optimized iterator takes filters of at most 32 x 32, got {r} x {s}"
    for epilogue, bias in ((op.epilogue0, op.bias0), (op.epilogue1, op.bias1)):
        if (problem := plan_problem(epilogue)) is not None:
            return problem
        if (reason := check_bias(bias, op.output)) is not None:
            return reason
    return None


# -------------------------------------------------------------------------- emission


def _functors(named: dict[str, Functor], structs: Iterable[str] = ()) -> str:
    """C++ for an instance's activations: `template <typename T> using NAME = ...` for each
    named functor, and `struct NAMEFn` for those in `structs` (b2b's first epilogue takes
    the struct itself)."""
    structs = set(structs)
    lines = []
    for name, functor in named.items():
        if functor.is_identity:
            if name in structs:
                lines.append(f"using {name}Fn = boltir::epilogue::IdentityFn;")
            else:
                lines.append(f"template <typename T> using {name} = cutlass::epilogue::thread::Identity<T>;")
            continue
        lines.append(f"struct {name}Fn {{")
        lines.append(f"  CUTLASS_HOST_DEVICE static float apply(float x) {{ return {functor.expression}; }}")
        lines.append("};")
        if name not in structs:
            lines.append(f"template <typename T> using {name} = boltir::epilogue::Apply<{name}Fn, T>;")
    return "\n".join(lines) + "\n"


def _common(op: Operation, name: str, key: str) -> dict:
    tile = op.tile.value
    align_a, align_b, align_c = op.prop_value("alignment")
    return {
        "name": name,
        "key": key,
        "tile": tile,
        "swizzle": op.prop_value("swizzle"),
        "align_a": align_a,
        "align_b": align_b,
        "align_c": align_c,
        "element_c": CUTLASS_ELEMENTS[element_name(op.output)],
        "accumulator": CUTLASS_ELEMENTS[str(op.accumulator)],
    }


def _plan_context(plan: EpiloguePlan) -> dict:
    functors = {"Act": plan.act}
    if plan.kind == "residual_block":
        functors["Act2"] = plan.act2
    return {
        "plan": plan,
        "alpha": f32_literal(plan.alpha),
        "beta": f32_literal(plan.beta),
        "functors": _functors(functors),
    }


def _gemm_context(op: cutlass.GemmOp) -> dict:
    plan = plan_epilogue(op.epilogue)
    layout_a, layout_b = op.prop_value("layout_a"), op.prop_value("layout_b")
    batching = gemm_batching(op)
    batch_text = {
        "none": "one GEMM (batch = 1)",
        "a+b": "a strided batch: A, B, D and the residual advance per batch",
        "b": "a strided batch: A is shared, B, D and the residual advance per batch",
        "a": "a strided batch: B is shared, A, D and the residual advance per batch",
    }[batching["batch_mode"]]
    if batching["fold_batch"]:
        batch_text = "the batch folded into M (B is shared, A row-major): one GEMM of (batch * m) rows"
    return {
        "layout_a": layout_a,
        "layout_b": layout_b,
        "cutlass_layout_a": "cutlass::layout::RowMajor" if layout_a == "row" else "cutlass::layout::ColumnMajor",
        "cutlass_layout_b": "cutlass::layout::RowMajor" if layout_b == "row" else "cutlass::layout::ColumnMajor",
        "element_a": CUTLASS_ELEMENTS[element_name(op.a)],
        "element_b": CUTLASS_ELEMENTS[element_name(op.b)],
        "split_k": op.prop_value("split_k"),
        "epilogue_text": _epilogue_text(op.epilogue),
        "batching_text": batch_text + (f"; serial split-k in {op.prop_value('split_k')} slices" if op.prop_value("split_k") > 1 else ""),
        **batching,
        **_plan_context(plan),
    }


def _conv_context(op: cutlass.Conv2dFpropOp) -> dict:
    iterator = op.prop_value("iterator_algorithm")
    return {
        "iterator": iterator,
        "iterator_enum": ITERATORS[iterator],
        "element_a": CUTLASS_ELEMENTS[element_name(op.input)],
        "element_b": CUTLASS_ELEMENTS[element_name(op.filter)],
        "split_k": op.prop_value("split_k"),
        "epilogue_text": _epilogue_text(op.epilogue),
        **_plan_context(plan_epilogue(op.epilogue)),
    }


def _depthwise_context(op: cutlass.DepthwiseConv2dFpropOp) -> dict:
    _, r, s, _ = tensor_shape(op.filter.type)
    h, w = depthwise_output_tile(op.tile.value.threadblock[0])
    return {
        "element_a": CUTLASS_ELEMENTS[element_name(op.input)],
        "element_b": CUTLASS_ELEMENTS[element_name(op.filter)],
        "filter_r": r,
        "filter_s": s,
        "output_tile_h": h,
        "output_tile_w": w,
        "epilogue_text": _epilogue_text(op.epilogue),
        **_plan_context(plan_epilogue(op.epilogue)),
    }


def _b2b_context(op: cutlass.B2bGemmOp | cutlass.B2bConv2dOp) -> dict:
    inputs = (op.a, op.b0) if isinstance(op, cutlass.B2bGemmOp) else (op.input, op.filter0)
    plan0, plan1 = plan_epilogue(op.epilogue0), plan_epilogue(op.epilogue1)
    e0 = op.epilogue0
    alpha0, beta0 = e0.alpha.value.data, e0.beta.value.data
    return {
        "element_a": CUTLASS_ELEMENTS[element_name(inputs[0])],
        "element_b": CUTLASS_ELEMENTS[element_name(inputs[1])],
        "tile1": op.tile1.value,
        "residency": op.prop_value("residency"),
        "plan0_bias": plan0.source == "bias",
        "plan1": plan1,
        "alpha0": f32_literal(alpha0),
        "beta0": f32_literal(beta0 if plan0.source == "bias" else 0.0),
        "alpha1": f32_literal(plan1.alpha),
        "beta1": f32_literal(plan1.beta),
        "epilogue0_text": _epilogue_text(op.epilogue0),
        "epilogue1_text": _epilogue_text(op.epilogue1),
        "functors": _functors({"Act0": plan0.act, "Act1": plan1.act}, structs=("Act0",)),
    }


CONTEXTS = {
    "gemm": _gemm_context,
    "conv2d_fprop": _conv_context,
    "depthwise_conv2d_fprop": _depthwise_context,
    "b2b_gemm": _b2b_context,
    "b2b_conv2d": _b2b_context,
}


def emit_instance(op: Operation) -> Instance:
    """One op's kernel definition and launcher (raises BoltError when unsupported)."""
    kind = family(op)
    reason = unsupported_reason(op)
    if reason is not None:
        raise BoltError(f"'{op.name}' has no CUTLASS instance: {reason}", format_location(op.location))
    key, name = instance_key(op), kernel_name(op)
    context = {**_common(op, name, key), **CONTEXTS[kind](op)}
    if kernel_arch(op) == "sm90":
        context.update(cutlass_sm90.context(op, name))
    source = render(f"{template_name(op)}.cu.j2", **context)
    return Instance(name, key, kind, source.rstrip("\n"), kernel_arch(op))


def kernel_arch(op: Operation) -> str:
    """The instance's generation as the nvcc driver's arch: "sm80" (2.x, mma.sync; runs on
    sm_80 and sm_90) or "sm90" (3.x, sm_90a only)."""
    return "sm90" if op.prop_value("arch") == "sm90" else "sm80"


def template_name(op: Operation) -> str:
    """The jinja2 template of the op's instance: `<family>` (2.x) or `<family>_sm90` (3.x;
    a pointwise conv as a persistent GEMM has its own, `cutlass_sm90.template_name`)."""
    return cutlass_sm90.template_name(op) if kernel_arch(op) == "sm90" else family(op)


def cutlass_ops(module_or_ops: ModuleOp | Iterable[Operation]) -> list[Operation]:
    """The cutlass template ops of a module (in order), or the given ops."""
    if isinstance(module_or_ops, ModuleOp):
        return [op for op in module_or_ops.walk() if type(op) in FAMILIES]
    return list(module_or_ops)


def emit_translation_unit(module_or_ops: ModuleOp | Iterable[Operation]) -> str:
    """The CUDA source for every distinct template instance among the module's cutlass ops
    (or the given ops): includes, boltir's epilogue header, `boltir_error_string`, and per
    instance its kernel type and `extern "C"` launcher, in first-use order."""
    instances: dict[str, Instance] = {}
    for op in cutlass_ops(module_or_ops):
        name = kernel_name(op)
        if name not in instances:
            instances[name] = emit_instance(op)
    families = {instance.family for instance in instances.values()}
    generations = {(instance.family, instance.arch) for instance in instances.values()}
    headers = list(dict.fromkeys(
        h for kind in FAMILIES.values() for arch in ("sm80", "sm90") if (kind, arch) in generations
        for h in (HEADERS[kind] if arch == "sm80" else cutlass_sm90.HEADERS[kind])
    ))
    header = header_text("boltir_epilogue.h")
    return render("translation_unit.cu.j2", 
        instances=list(instances.values()),
        hopper=any(instance.arch == "sm90" for instance in instances.values()),
        launches_3x=any(instance.arch == "sm90" for instance in instances.values()),
        headers=headers,
        epilogue_header=header,
        include_paths=["<cutlass>/include"] + (["<cutlass>/tools/util/include"] if any(i.arch == "sm90" for i in instances.values()) else []) + (
            ["<cutlass>/examples/13_two_tensor_op_fusion"] if families & {"b2b_gemm", "b2b_conv2d"} else []
        ),
    )


# ------------------------------------------------------------------------- launch


def _conv_window(op: Operation) -> tuple[int, ...]:
    pads, strides, dilations = op.prop_value("pads"), op.prop_value("strides"), op.prop_value("dilations")
    # The launchers take the top and left pads; the others follow from P and Q.
    return (pads[0], pads[1], strides[0], strides[1], dilations[0], dilations[1])


def launch_arguments(op: Operation) -> LaunchArguments:
    """The launcher name, pointer operands and problem integers of a cutlass template op."""
    kind = family(op)
    out = tensor_shape(op.output.type)
    if kind == "gemm":
        a = tensor_shape(op.a.type)
        k = a[-1] if op.prop_value("layout_a") == "row" else a[-2]
        problem = (math.prod(out[:-2]), out[-2], out[-1], k)
        operands = (op.a, op.b, op.bias, op.residual, op.output)
    elif kind in ("conv2d_fprop", "depthwise_conv2d_fprop"):
        n, h, w, c = tensor_shape(op.input.type)
        k, r, s, _ = tensor_shape(op.filter.type)
        problem = (n, h, w, c, k, r, s, out[1], out[2], *_conv_window(op))
        operands = (op.input, op.filter, op.bias, op.residual, op.output)
    elif kind == "b2b_gemm":
        a = tensor_shape(op.a.type)
        m0, k0 = math.prod(a[:-1]), a[-1]
        n0 = tensor_shape(op.b0.type)[0]
        n1 = tensor_shape(op.b1.type)[0]
        problem = (m0, n0, k0, m0, n1, n0)
        operands = (op.a, op.b0, op.b1, op.bias0, op.bias1, op.output)
    else:
        n, h, w, c = tensor_shape(op.input.type)
        k0, r, s, _ = tensor_shape(op.filter0.type)
        k1 = tensor_shape(op.filter1.type)[0]
        problem = (n, h, w, c, k0, r, s, out[1], out[2], *_conv_window(op), k1)
        operands = (op.input, op.filter0, op.filter1, op.bias0, op.bias1, op.output)
    return LaunchArguments(kernel_name(op), operands, tuple(int(x) for x in problem), workspace=True)



def supports(op: Operation) -> bool:
    """Every cutlass template op is this generator's (`unsupported_reason` says when its
    parameters make no valid instance, and emitting it is then an error)."""
    return type(op) in FAMILIES


def is_fallback(op: Operation) -> bool:
    return False


# --------------------------------------------------------------------------- target


@dataclass(frozen=True)
class CudaTarget(Target):
    """`bolt-opt x.mlir -t cuda`: the module's cutlass ops as one CUDA translation unit."""

    name = "cuda"

    def emit(self, ctx, module: ModuleOp, output) -> None:
        output.write(emit_translation_unit(module))
