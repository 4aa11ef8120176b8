"""One-op `op.attention` modules, shared by tests/backends/test_attention_kernels.py and
bench/check_attention.py: `func.func @main` whose arguments are the op's operands, in
operand order (q, then k and v unless the layout is BS3HD, then the bias, then the key
lengths)."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType, ModuleOp, TensorType
from xdsl.ir import Block, Region

from boltir.dialects import op as ops
from boltir.ir import verify_module

ELEMENTS = {"f16": Float16Type, "bf16": BFloat16Type, "f32": Float32Type, "f64": Float64Type}


def head_shape(layout: str, batch: int, heads: int, seq: int, dim: int) -> tuple[int, ...]:
    """q, k or v's shape in `layout` (the packed tensor's for BS3HD)."""
    return {"BHSD": (batch, heads, seq, dim), "BSHD": (batch, seq, heads, dim), "BS3HD": (batch, seq, 3, heads, dim)}[layout]


def attention_module(layout: str, batch: int, heads: int, seq_q: int, seq_k: int | None = None, dim: int = 64,
                     dim_value: int | None = None, element: str = "f16", bias: tuple[int, ...] | None = None,
                     bias_element: str | None = None, causal: bool = False, key_lengths: bool = False,
                     scale: float | None = None) -> tuple[ModuleOp, ops.AttentionOp]:
    """The module and its one op. BS3HD takes seq_k = seq_q and dim_value = dim."""
    seq_k = seq_q if seq_k is None else seq_k
    dim_value = dim if dim_value is None else dim_value
    make = ELEMENTS[element]
    if layout == "BS3HD":
        types = [TensorType(make(), head_shape(layout, batch, heads, seq_q, dim))]
    else:
        types = [TensorType(make(), head_shape(layout, batch, heads, s, d))
                 for s, d in ((seq_q, dim), (seq_k, dim), (seq_k, dim_value))]
    if bias is not None:
        types.append(TensorType(ELEMENTS[bias_element or element](), bias))
    if key_lengths:
        types.append(TensorType(IntegerType(32), (batch,)))
    block = Block(arg_types=types)
    args = list(block.args)
    q = args.pop(0)
    k, v = (None, None) if layout == "BS3HD" else (args.pop(0), args.pop(0))
    bias_value = args.pop(0) if bias is not None else None
    lengths = args.pop(0) if key_lengths else None
    op = ops.AttentionOp(q, k, v, bias=bias_value, key_lengths=lengths, layout=layout,
                         scale=dim**-0.5 if scale is None else scale, causal=causal)
    block.add_ops([op, func.ReturnOp(op.results[0])])
    module = ModuleOp([func.FuncOp("main", (types, [op.results[0].type]), Region(block))])
    verify_module(module)
    return module, op
