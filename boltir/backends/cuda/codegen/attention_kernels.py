"""Fused multi-head attention for `op.attention`: softmax(q @ kᵀ * scale + bias) @ v in one
launch, with no S×S scores in memory. The kernel is CUTLASS example 41's forward kernel
(`AttentionKernel` of `examples/41_fused_multi_head_attention/kernel_forward.h` in the
nvidia-cutlass wheel, the xFormers memory-efficient attention: mma.sync, an online
softmax), included from the wheel; the launcher is ours (`templates/attention.cu.j2`).

    name = kernel_name(op)                 # boltir_attention_1a2b3c4d5e6f
    arguments = launch_arguments(op)       # pointers, problem integers, workspace
    source = emit_translation_unit(ops)    # one unit, instances deduplicated

**Three instance kinds**, the first that takes the op computes it:
- on sm90 builds (`select-kernels` marks the op `kernel_arch = "sm90"`, or
  "sm90:SCHEDULE" with `hopper_schedule`'s choice), the Hopper kernel of CUTLASS example
  88 (`attention_sm90_kernels`: wgmma, TMA, warp-specialized; f16/bf16, D = Dv = 64 or
  128), compiled for sm_90a (`kernel_arch`);
- example 41's kernel (below), on every target;
- the plain fallback.
All three have one launcher ABI, so the host program calls them alike.

**Instances.** The kernel is compiled for `cutlass::arch::Sm80` (as the example does for
sm80 and sm90 alike) and the unit with the sm80 record's flags, which carry SASS for sm_80
and sm_90. `instance_key` is the element type, the tile, alignment and whether a bias is
read; the problem (sizes, strides, scale, causal) is passed at run time, so every layer of
a model, whatever its layout, shares one instance. Tiles follow the example's rule, by the
larger of the head dims D and Dv:
- D ≤ 64: 64 queries × 64 keys, kMaxK 64 (4 warps);
- 64 < D ≤ 128: 32 queries × 128 keys, kMaxK 128 (4 warps): kKeysPerBlock ≥ kMaxK keeps
  the 32×128 output tile in registers over the whole key loop (kSingleValueIteration);
- D > 128: 32 × 128, unbounded kMaxK; the output no longer fits the registers and is
  accumulated in f32 in a workspace of B × Sq × H × Dv floats
  (`AttentionKernel::kNeedsOutputAccumulatorBuffer`, asked by `NAME_workspace_size`).
q, k and v take 16-byte loads when D and Dv are multiples of 8 ("aligned"), 8-byte loads
when they are multiples of 4.

**Layouts.** Each layout is a set of (batch, head, row) strides, in elements, so nothing is
copied: BHSD q [B, H, S, D] has (H·S·D, S·D, D); BSHD q [B, S, H, D] has (S·H·D, D, H·D);
BS3HD's one packed tensor [B, S, 3, H, D] gives q, k and v the strides (S·3·H·D, D,
3·H·D) and k, v the offsets H·D and 2·H·D from its pointer. The output is BHSD for BHSD
and [B, S, H, Dv] otherwise. A bias broadcast to [B, H, Sq, Sk] has stride 0 along each
broadcast dimension (the kernel checks only that its strides are multiples of its load
width, which 0 is); it must be contiguous along the keys.

**Launcher ABI** (`LaunchArguments.workspace` is true: the CUTLASS launchers' form):

    int NAME(const void *q, const void *k, const void *v, const void *bias,
             const void *key_lengths, void *output, <PROBLEM_FIELDS as ints>,
             void *workspace, size_t workspace_bytes, cudaStream_t stream);
    size_t NAME_workspace_size(<PROBLEM_FIELDS as ints>);

k and v are q's pointer for BS3HD; bias and key_lengths may be null (key_lengths: i32 [B],
keys at index ≥ key_lengths[b] are masked). Error codes as for the CUTLASS launchers
(`boltir_error_string`). Causal masking is top-left: key j is masked for query i when j > i.

**What the fused kernel does not take** (`fused_reason`): f32, head dims not a multiple of
4, a bias of another element type than q, a bias broadcast along the keys or whose rows
are not a multiple of 8 keys (the kernel loads bias rows 16 bytes at a time; a lowering
that wants the fused kernel materializes such a bias padded to a multiple of 8 keys), more
than 65535 batches or heads. Those ops get the **fallback** (`is_fallback`,
`templates/attention_fallback.cu.j2`): one block per query row, the scores a chunk at a
time in shared memory with an online softmax, f32 throughout; same ABI, correct, slow.
Either kernel refuses tensors of 2³¹ elements or more (32-bit strides); a row whose keys
are all masked is zeros in both (as in the interpreter), except a row that the bias alone
masks entirely with -inf, which the fused kernel leaves NaN (0 / 0 in its softmax).
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue

from boltir.backends.cuda.codegen import attention_sm90_kernels as sm90
from boltir.backends.cuda.codegen.generator import (
    Instance,
    LaunchArguments,
    header_text,
    render,
)
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.target import get_target

FAMILIES: dict[type, str] = {ops.AttentionOp: "attention"}

ELEMENTS = {"f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t"}
"""The fused kernel's element types."""
FALLBACK_ELEMENTS = {**ELEMENTS, "f32": "float"}
FALLBACK_THREADS = 128
FALLBACK_CHUNK = 256
"""Keys whose scores the fallback holds in shared memory at a time."""
HEADER = "kernel_forward.h"
"""From the wheel's `examples/41_fused_multi_head_attention` (an nvcc include path)."""

PROBLEM_FIELDS = (
    "batch", "heads", "seq_q", "seq_k", "head_dim", "head_dim_value", "scale_bits", "causal", "k_offset", "v_offset",
    "q_b", "q_h", "q_m", "k_b", "k_h", "k_m", "v_b", "v_h", "v_m", "bias_b", "bias_h", "bias_m", "o_b", "o_h", "o_m",
)
"""The launcher's integers, in ABI order (the template's `Problem`)."""

GRID_LIMIT = 65535
"""Heads are the grid's y and batches its z dimension."""
INT_LIMIT = 2**31
BIAS_KEYS_MULTIPLE = 8
"""The kernel loads bias rows in 16-byte vectors (8 f16/bf16)."""


@dataclass(frozen=True)
class AttentionTile:
    """AttentionKernel's template tile: kQueriesPerBlock, kKeysPerBlock and kMaxK."""

    queries: int
    keys: int
    max_k: int

    @property
    def single_pass(self) -> bool:
        """kSingleValueIteration: the output stays in registers (no workspace)."""
        return self.max_k <= self.keys


UNBOUNDED_MAX_K = 65536
"""The example's kMaxK for head dims above 128."""


def tile_for(head_dim: int) -> AttentionTile:
    """The example's tile for the larger of D and Dv."""
    if head_dim <= 64:
        return AttentionTile(64, 64, 64)
    if head_dim <= 128:
        return AttentionTile(32, 128, 128)
    return AttentionTile(32, 128, UNBOUNDED_MAX_K)


@dataclass(frozen=True)
class Strides:
    """An operand's (batch, head, row) strides in elements."""

    b: int
    h: int
    m: int


@dataclass(frozen=True)
class Geometry:
    """An attention's sizes and the strides of its operands, as the kernel reads them."""

    batch: int
    heads: int
    seq_q: int
    seq_k: int
    head_dim: int
    head_dim_value: int
    q: Strides
    k: Strides
    v: Strides
    output: Strides
    bias: Strides
    k_offset: int = 0
    v_offset: int = 0


NO_BIAS = Strides(0, 0, 0)


def _element(value: SSAValue) -> str:
    return str(value.type.element_type)


def geometry(op: ops.AttentionOp) -> Geometry:
    """The op's sizes, the (batch, head, row) strides of q, k, v, bias and output, and the
    offsets of k and v from their pointers (BS3HD's packed tensor)."""
    layout = op.prop_value("layout")
    (b, h, sq, d), (_, _, sk, _), (_, _, _, dv) = op.head_shapes()
    if layout == "BHSD":
        q, k = Strides(h * sq * d, sq * d, d), Strides(h * sk * d, sk * d, d)
        v, out = Strides(h * sk * dv, sk * dv, dv), Strides(h * sq * dv, sq * dv, dv)
        offsets = (0, 0)
    elif layout == "BSHD":
        q, k = Strides(sq * h * d, d, h * d), Strides(sk * h * d, d, h * d)
        v, out = Strides(sk * h * dv, dv, h * dv), Strides(sq * h * dv, dv, h * dv)
        offsets = (0, 0)
    else:  # BS3HD: one [B, S, 3, H, D] tensor
        q = k = v = Strides(sq * 3 * h * d, d, 3 * h * d)
        out = Strides(sq * h * d, d, h * d)
        offsets = (h * d, 2 * h * d)
    bias = NO_BIAS if op.bias is None else bias_strides(tensor_shape(op.bias.type), (b, h, sq, sk))
    return Geometry(b, h, sq, sk, d, dv, q, k, v, out, bias, *offsets)


def bias_strides(shape: tuple[int, ...], scores: tuple[int, int, int, int]) -> Strides:
    """The (batch, head, query) strides of a bias that broadcasts to the scores [B, H, Sq,
    Sk]: its row-major strides, 0 along every broadcast dimension."""
    padded = (1,) * (4 - len(shape)) + tuple(shape)
    strides, running = [], 1
    for extent in reversed(padded):
        strides.append(running)
        running *= extent
    strides.reverse()
    b, h, m, _ = (0 if own == 1 else stride for own, stride in zip(padded, strides))
    return Strides(b, h, m)


def _head_dims(op: ops.AttentionOp) -> tuple[int, int]:
    (_, _, _, d), _, (_, _, _, dv) = op.head_shapes()
    return d, dv


def _aligned(op: ops.AttentionOp) -> bool:
    """16-byte loads of q, k and v: D and Dv multiples of 8 (every stride and offset is then one too)."""
    return all(x % 8 == 0 for x in _head_dims(op))


# ---------------------------------------------------------------- instance keys


def family(op: Operation) -> str:
    try:
        return FAMILIES[type(op)]
    except KeyError:
        raise BoltError(f"'{op.name}' is not an attention op", format_location(op.location)) from None


def tile(op: ops.AttentionOp) -> AttentionTile:
    return tile_for(max(_head_dims(op)))


def instance_key(op: ops.AttentionOp) -> str:
    """The fused kernel's template parameters (element type, tile, alignment, whether a
    bias is read), or the fallback's (element types, the bias's stride along the keys,
    output dims per thread)."""
    if is_sm90(op):
        return sm90.instance_key(_element(op.q), _head_dims(op)[0], op.bias is not None, sm90_schedule(op))
    if is_fallback(op):
        return (f"{family(op)}_fallback {_element(op.q)} bias={_element(op.bias) if op.bias is not None else 'no'} "
                f"bias_key_stride={_bias_key_stride(op)} values_per_thread={_values_per_thread(op)}")
    t = tile(op)
    max_k = "any" if t.max_k == UNBOUNDED_MAX_K else t.max_k
    return (f"{family(op)} {_element(op.q)} tile {t.queries}x{t.keys} max_k {max_k} "
            f"{'aligned' if _aligned(op) else 'unaligned'} bias={'yes' if op.bias is not None else 'no'}")


def kernel_name(op: Operation) -> str:
    """The op's `extern "C"` launcher (its workspace query adds `_workspace_size`)."""
    key = instance_key(op)
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return f"boltir_{key.split()[0]}_{digest}"


# ------------------------------------------------------- the Hopper instance kind

KERNEL_ARCH_ATTR = "kernel_arch"
"""An op.attention's discardable attribute: "sm90" where the build targets Hopper (the
Hopper kernel computes the op where it can, `sm90_reason`), optionally with the schedule,
"sm90:cooperative"; absent or "sm80": example 41's kernel."""


def mark_target(op: Operation, arch: str, cutlass: int = 3, sms: int = 0) -> None:
    """Records the build's target on an attention op (select-kernels calls it): Hopper
    kernels on sm90, with `hopper_schedule`'s schedule for `sms` multiprocessors (0: the
    arch's), unless `cutlass` = 2 keeps every kernel a 2.x-generation one."""
    if type(op) in FAMILIES and arch == "sm90" and cutlass >= 3:
        schedule = hopper_schedule(op, sms or get_target(arch).multiprocessors)
        op.attributes[KERNEL_ARCH_ATTR] = StringAttr("sm90" if schedule == sm90.DEFAULT_SCHEDULE else f"sm90:{schedule}")


LONG_KEY_STEPS = 4
"""128-key steps from which a D = 64 attention takes "overlap_q4" (no bias), "overlap" (causal) or
"locked" (a bias)."""


def hopper_schedule(op: ops.AttentionOp, sms: int) -> str:
    """The Hopper schedule for D = 64, from the timings on a Hopper (bench/RESULTS.md,
    sixteenth and thirty-third sessions, fast math): where the 128-query tiles are fewer than
    the multiprocessors (BERT at batch 1, GPT-2's prefill at batch 8), "tma"'s 64-query
    tiles, twice the blocks; with a bias, "locked" for LONG_KEY_STEPS key steps or more
    (sequence 512; the warp groups take turns at the softmax) and "wide"'s 128-key steps
    below; without one, our mainloop (each step's softmax under the previous step's P·V
    product) with two Q stages a warp group: "overlap_q4" from LONG_KEY_STEPS, and below it
    "overlap_q4_sums" (the rows' totals under the last product: faster below four key
    steps, slower from four); causal, "overlap" from LONG_KEY_STEPS and "wide" below (not
    timed with two Q stages). Other head dims: the persistent schedule on the example's
    tiles."""
    (b, h, sq, d), (_, _, sk, _), _ = op.head_shapes()
    if sm90.schedule_reason("wide", d) or sm90.schedule_reason("tma", d):
        return sm90.DEFAULT_SCHEDULE
    queries, keys = sm90.tile(d, "wide")
    if b * h * -(-sq // queries) < sms:
        return "tma"
    long_keys = -(-sk // keys) >= LONG_KEY_STEPS
    if op.bias is not None:
        return "locked" if long_keys else "wide"
    if op.prop_value("causal"):
        return "overlap" if long_keys else "wide"
    return "overlap_q4" if long_keys else "overlap_q4_sums"


def _target(op: Operation) -> tuple[str, str]:
    attr = op.attributes.get(KERNEL_ARCH_ATTR)
    text = attr.data if isinstance(attr, StringAttr) else "sm80"
    arch, _, schedule = text.partition(":")
    return arch, schedule or sm90.DEFAULT_SCHEDULE


def sm90_schedule(op: Operation) -> str:
    schedule = _target(op)[1]
    if schedule not in sm90.SCHEDULES:
        raise BoltError(f"unknown Hopper attention schedule '{schedule}'; known: {', '.join(sm90.SCHEDULES)}",
                        format_location(op.location))
    return schedule


def sm90_reason(op: ops.AttentionOp) -> str | None:
    """Why the Hopper kernel does not compute the op, or None (the target aside)."""
    bias = None if op.bias is None else (tensor_shape(op.bias.type), _element(op.bias))
    return (_size_reason(op) or sm90.reason(_element(op.q), geometry(op), bias)
            or sm90.schedule_reason(_target(op)[1], _head_dims(op)[0]))


def is_sm90(op: Operation) -> bool:
    """True where the op is marked for Hopper and the Hopper kernel takes it."""
    return type(op) in FAMILIES and _target(op)[0] == "sm90" and sm90_reason(op) is None


def kernel_arch(op: Operation) -> str:
    """The unit's arch for the nvcc driver: "sm90" (sm_90a) in a Hopper build, for the
    Hopper kernel and also for example 41's and the fallback (so that they take part in
    programmatic dependent launch); "sm80" (SASS for sm_80 and sm_90) otherwise."""
    return "sm90" if type(op) in FAMILIES and _target(op)[0] == "sm90" else "sm80"


# ------------------------------------------------------------- what is supported


def unsupported_reason(op: Operation) -> str | None:
    """Why neither the fused kernel nor the fallback computes the op, or None."""
    if type(op) not in FAMILIES:
        return f"'{op.name}' is not an attention op"
    if fused_reason(op) is None:
        return None
    return fallback_reason(op)


def fallback_reason(op: ops.AttentionOp) -> str | None:
    """Why the fallback does not compute the op, or None."""
    elements = {_element(v) for v in (op.q, op.bias) if v is not None}
    if not elements <= set(FALLBACK_ELEMENTS):
        return f"element types {', '.join(sorted(elements))}: the attention kernels take {', '.join(FALLBACK_ELEMENTS)}"
    g = geometry(op)
    if g.batch * g.heads * g.seq_q >= INT_LIMIT:
        return f"{g.batch * g.heads * g.seq_q} query rows: the fallback's grid takes fewer than 2^31"
    return _size_reason(op)


def _size_reason(op: ops.AttentionOp) -> str | None:
    values = [v for v in (op.q, op.k, op.v, op.bias, op.output) if v is not None]
    if any(math.prod(tensor_shape(v.type)) >= INT_LIMIT for v in values):
        return "a tensor of 2^31 elements or more: the kernels' strides are 32-bit"
    return None


def fused_reason(op: ops.AttentionOp) -> str | None:
    """Why the fused kernel does not compute the op, or None."""
    element = _element(op.q)
    if element not in ELEMENTS:
        return f"element type {element}: the fused attention kernel takes {' or '.join(ELEMENTS)}"
    d, dv = _head_dims(op)
    if d % 4 or dv % 4:
        return f"head dims {d} and {dv}: the fused attention kernel needs multiples of 4"
    g = geometry(op)
    if g.seq_k == 0 and g.batch * g.heads * g.seq_q:
        return "no keys: every query's softmax is empty"
    if g.batch > GRID_LIMIT or g.heads > GRID_LIMIT:
        return f"{g.batch} batches of {g.heads} heads: the kernel's grid takes at most {GRID_LIMIT} of each"
    if (reason := _size_reason(op)) is not None:
        return reason
    if op.bias is not None:
        return _bias_reason(op, element, g)
    return None


def _bias_reason(op: ops.AttentionOp, element: str, g: Geometry) -> str | None:
    bias = tensor_shape(op.bias.type)
    if _element(op.bias) != element:
        return f"the bias is {_element(op.bias)} but q is {element}: the kernel reads the bias as q's element type"
    if bias[-1] != g.seq_k:
        return f"the bias {'x'.join(map(str, bias))} broadcasts along the keys: the kernel reads bias rows of Sk = {g.seq_k} keys"
    if g.seq_k % BIAS_KEYS_MULTIPLE:
        return (f"the bias rows have {g.seq_k} keys, not a multiple of {BIAS_KEYS_MULTIPLE}: "
                "the kernel loads them 16 bytes at a time")
    return None


def supports(op: Operation) -> bool:
    """Every attention op is this generator's: emitting one that neither kernel computes
    raises both reasons (the host program would otherwise say only that no kernel
    computes it)."""
    return type(op) in FAMILIES


def is_fallback(op: Operation) -> bool:
    """True where neither fused kernel takes the op and the plain one computes it."""
    return not is_sm90(op) and fused_reason(op) is not None


def _bias_key_stride(op: ops.AttentionOp) -> int:
    return 0 if op.bias is not None and tensor_shape(op.bias.type)[-1] == 1 else 1


def _values_per_thread(op: ops.AttentionOp) -> int:
    return max(1, -(-_head_dims(op)[1] // FALLBACK_THREADS))


# ---------------------------------------------------------------------- launch


def f32_bits(value: float) -> int:
    """The signed 32-bit integer with `value`'s f32 bit pattern (the launcher takes ints)."""
    return struct.unpack("<i", struct.pack("<f", value))[0]


def problem(op: ops.AttentionOp) -> tuple[int, ...]:
    """The launcher's integers, in `PROBLEM_FIELDS` order."""
    g = geometry(op)
    values = (
        g.batch, g.heads, g.seq_q, g.seq_k, g.head_dim, g.head_dim_value,
        f32_bits(op.prop_value("scale")), int(bool(op.prop_value("causal"))), g.k_offset, g.v_offset,
        *(s for strides in (g.q, g.k, g.v, g.bias, g.output) for s in (strides.b, strides.h, strides.m)),
    )
    assert len(values) == len(PROBLEM_FIELDS)
    return values


def launch_arguments(op: Operation) -> LaunchArguments:
    """q, k, v (q's pointer thrice for BS3HD), bias, key_lengths, output; the problem."""
    family(op)
    k = op.q if op.k is None else op.k
    v = op.q if op.v is None else op.v
    operands = (op.q, k, v, op.bias, op.key_lengths, op.output)
    return LaunchArguments(kernel_name(op), operands, problem(op), workspace=True)


# ---------------------------------------------------------------------- emission


def emit_instance(op: Operation) -> Instance:
    """One op's kernel instance and launcher (raises BoltError when it has none)."""
    reason = unsupported_reason(op)
    if reason is not None:
        raise BoltError(f"'{op.name}' has no attention kernel: {fused_reason(op)}; {reason}", format_location(op.location))
    name, key = kernel_name(op), instance_key(op)
    common = {
        "name": name, "key": key, "problem_fields": PROBLEM_FIELDS, "int_names": ", ".join(PROBLEM_FIELDS),
        "int_parameters": ", ".join(f"int {field}" for field in PROBLEM_FIELDS),
    }
    if is_sm90(op):
        source = sm90.emit_source(common, _element(op.q), _head_dims(op)[0], op.bias is not None, sm90_schedule(op))
    elif is_fallback(op):
        source = render(
            "attention_fallback.cu.j2", **common,
            element=FALLBACK_ELEMENTS[_element(op.q)],
            bias_element=FALLBACK_ELEMENTS[_element(op.bias if op.bias is not None else op.q)],
            bias_key_stride=_bias_key_stride(op), values_per_thread=_values_per_thread(op),
            threads=FALLBACK_THREADS, chunk=FALLBACK_CHUNK,
        )
    else:
        t = tile(op)
        source = render(
            "attention.cu.j2", **common,
            element=ELEMENTS[_element(op.q)], aligned=_aligned(op), bias=op.bias is not None,
            queries=t.queries, keys=t.keys, max_k=t.max_k, single_pass=t.single_pass,
            max_k_text="any size" if t.max_k == UNBOUNDED_MAX_K else str(t.max_k),
        )
    return Instance(name, key, family(op), source.strip("\n"), kernel_arch(op))


def attention_ops(module_or_ops: ModuleOp | Iterable[Operation]) -> list[Operation]:
    if isinstance(module_or_ops, ModuleOp):
        return [op for op in module_or_ops.walk() if type(op) in FAMILIES]
    return list(module_or_ops)


def emit_translation_unit(module_or_ops: ModuleOp | Iterable[Operation]) -> str:
    """One unit with every distinct instance among the ops (a module: its attention ops),
    in the CUTLASS units' frame (error codes, `boltir_error_string`)."""
    instances: dict[str, Instance] = {}
    for op in attention_ops(module_or_ops):
        name = kernel_name(op)
        if name not in instances:
            instances[name] = emit_instance(op)
    kinds = {i.key.split()[0] for i in instances.values()}
    hopper = "attention_sm90" in kinds
    own_mainloop = any(is_sm90(op) and sm90.SCHEDULES[sm90_schedule(op)].own_mainloop for op in attention_ops(module_or_ops))
    return render(
        "translation_unit.cu.j2",
        instances=list(instances.values()),
        hopper=hopper,
        launches_3x=False,
        headers=([HEADER] if "attention" in kinds else []) + ([sm90.HEADER] if hopper else []),
        epilogue_header=header_text("boltir_epilogue.h") + (sm90.fusion_header(own_mainloop) if hopper else ""),
        include_paths=["<cutlass>/include", "<cutlass>/examples/41_fused_multi_head_attention"]
        + (["<cutlass>/tools/util/include", sm90.INCLUDE_PATH] if hopper else []),
    )


FAST_MATH_FLAGS = ("--use_fast_math",)
"""The Hopper units' flags: CUTLASS builds example 88 with them. Its softmax's exp2f is then
PTX's ex2.approx.ftz.f32; without them ex2.approx.f32, which keeps subnormal results at the
cost of instructions around the MUFU.EX2 (every schedule ran 2-7% slower so,
bench/RESULTS.md). Probabilities under 2^-126 flush to 0, as they do when rounded to f16."""


def unit_flags(module_or_ops: ModuleOp | Iterable[Operation]) -> tuple[str, ...]:
    """nvcc's flags for `emit_translation_unit`'s unit after boltir's own: FAST_MATH_FLAGS
    where it holds a Hopper instance."""
    return FAST_MATH_FLAGS if any(is_sm90(op) for op in attention_ops(module_or_ops)) else ()


def unit_arch(module_or_ops: ModuleOp | Iterable[Operation]) -> str:
    """The arch of `emit_translation_unit`'s unit: sm90 (sm_90a only) if an op of it is in a Hopper build."""
    return "sm90" if any(kernel_arch(op) == "sm90" for op in attention_ops(module_or_ops)) else "sm80"
