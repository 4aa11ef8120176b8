"""The ONNX `Attention` converter (opset 23 and 24): one `graph.attention` where the node
is what graph.attention computes, else the same attention written out as matmuls and a
softmax (softcap, the qk_matmul_output output). Registered in onnx_converters.py."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from boltir.dialects import graph
from boltir.frontends.onnx_context import NodeContext, Value


def convert_attention(ctx: NodeContext) -> list[Value]:
    """ONNX Attention (opset 23): Q, K, V as [B, H, S, D], or 3-D [B, S, H·D] with
    q_num_heads and kv_num_heads; fewer K/V heads than Q heads (each repeated, as grouped-
    query attention does); an optional boolean (true = attend) or additive attn_mask;
    past_key / past_value joined before K and V, with the present ones as outputs 1 and 2;
    is_causal (key j seen by query i when j <= i + the past length); nonpad_kv_seqlen as
    a mask; scale (default 1/sqrt(D)). With a softcap, or the qk_matmul_output output
    used, it is written out as matmuls and a softmax. Sliding windows and masks shorter
    than the keys are errors."""
    softcap, mode = ctx.attr("softcap", 0.0), ctx.attr("qk_matmul_output_mode", 0)
    if ctx.has_input(4) != ctx.has_input(5):
        raise ctx.error("past_key and past_value must be given together")
    ctx.attr("softmax_precision")  # the softmax runs in f32 whatever it asks
    q, k, v = (attention_heads(ctx, i, ctx.attr("q_num_heads" if i == 0 else "kv_num_heads")) for i in range(3))
    if ctx.has_input(4):
        k = ctx.emit(graph.ConcatOp([ctx.value(4), k], 2)).output
        v = ctx.emit(graph.ConcatOp([ctx.value(5), v], 2)).output
    present = [k, v]
    heads, kv_heads = graph.tensor_shape(q.type)[1], graph.tensor_shape(k.type)[1]
    if heads % kv_heads:
        raise ctx.error(f"Q's {heads} heads are not a multiple of K's {kv_heads}")
    k, v = (repeat_heads(ctx, x, heads // kv_heads) for x in (k, v))
    mask = ctx.value(3) if ctx.has_input(3) else None
    causal = bool(ctx.attr("is_causal", 0))
    past = ctx.shape(4)[2] if ctx.has_input(4) else 0
    if causal and past:  # aligned to the last keys: an explicit mask
        mask, causal = causal_with_offset(ctx, mask, graph.tensor_shape(q.type)[2], graph.tensor_shape(k.type)[2], past), False
    if ctx.has_input(6):
        mask, causal = with_key_lengths(ctx, mask, causal, graph.tensor_shape(q.type)[2], graph.tensor_shape(k.type)[2]), False
    scale = ctx.attr("scale", 1.0 / math.sqrt(graph.tensor_shape(q.type)[3]))
    if softcap or ctx.output_used(3):  # what graph.attention does not compute: its parts
        y, scores = decomposed_attention(ctx, (q, k, v), mask, causal, scale, softcap)
        present.append(scores[mode])
    else:
        y = ctx.emit(graph.AttentionOp(q, k, v, mask, scale=scale, causal=causal)).output
    if len(ctx.shape(0)) == 3:
        b, h, s, dv = graph.tensor_shape(y.type)
        y = ctx.emit(graph.ReshapeOp(ctx.emit(graph.TransposeOp(y, (0, 2, 1, 3))).output, (b, s, h * dv))).output
    return [y, *present][: len(ctx.node.output)]


def attention_heads(ctx: NodeContext, index: int, heads: int | None) -> SSAValue:
    """Q, K or V as [B, H, S, D]: 4-D as given, 3-D [B, S, H·D] split into `heads`."""
    shape = ctx.shape(index)
    if len(shape) == 4:
        return ctx.value(index)
    if len(shape) != 3 or not heads:
        raise ctx.error("Q, K and V must be 4-D, or 3-D with q_num_heads and kv_num_heads")
    b, s, hidden = shape
    split = ctx.emit(graph.ReshapeOp(ctx.value(index), (b, s, heads, hidden // heads))).output
    return ctx.emit(graph.TransposeOp(split, (0, 2, 1, 3))).output


def repeat_heads(ctx: NodeContext, x: SSAValue, times: int) -> SSAValue:
    """[B, H, S, D] with each head repeated `times` times in a row: [h0, h0, h1, h1, ...]."""
    if times == 1:
        return x
    b, h, s, d = graph.tensor_shape(x.type)
    single = ctx.emit(graph.ReshapeOp(x, (b, h, 1, s, d))).output
    repeated = ctx.emit(graph.ExpandOp(single, (b, h, times, s, d))).output
    return ctx.emit(graph.ReshapeOp(repeated, (b, h * times, s, d))).output


def decomposed_attention(ctx: NodeContext, qkv, mask, causal: bool, scale: float, softcap: float):
    """Y and the qk_matmul_output of each mode: the scaled (and softcapped) product
    (modes 0 and 1), with the mask added (2), after the softmax (3)."""
    q, k, v = qkv
    dtype = ctx.dtype(0)
    kt = ctx.emit(graph.TransposeOp(k, (0, 1, 3, 2))).output
    product = ctx.emit(graph.MatMulOp(q, kt)).output
    scores = ctx.emit(graph.MulOp(product, node_constant(ctx, "scale", np.array(scale, dtype=dtype)))).output
    if softcap:
        cap = node_constant(ctx, "softcap", np.array(softcap, dtype=dtype))
        capped = ctx.emit(graph.TanhOp(ctx.emit(graph.DivOp(scores, cap)).output)).output
        scores = ctx.emit(graph.MulOp(capped, cap)).output
    if causal:
        mask = causal_with_offset(ctx, mask, graph.tensor_shape(q.type)[2], graph.tensor_shape(k.type)[2], 0)
    masked = scores if mask is None else ctx.emit(graph.AddOp(scores, additive(ctx, mask))).output
    probabilities = ctx.emit(graph.SoftmaxOp(masked, -1)).output
    return ctx.emit(graph.MatMulOp(probabilities, v)).output, [scores, scores, masked, probabilities]


def with_key_lengths(ctx: NodeContext, mask: SSAValue | None, causal: bool, queries: int, keys: int) -> SSAValue:
    """The mask with the keys at index >= nonpad_kv_seqlen[b] masked; causal, query i sees
    key j when j <= i + nonpad_kv_seqlen[b] - queries (the queries are the last tokens)."""
    lengths = ctx.emit(graph.ReshapeOp(ctx.value(6), (ctx.shape(6)[0], 1, 1, 1))).output
    lengths = ctx.emit(graph.CastOp(lengths, graph.IntegerType(64))).output
    key_index = node_constant(ctx, "key_index", np.arange(keys, dtype=np.int64))
    seen = ctx.emit(graph.LessOp(key_index, lengths)).output
    if causal:
        last = node_constant(ctx, "last_query", np.arange(queries, dtype=np.int64).reshape(queries, 1) - queries + 1)
        seen = ctx.emit(graph.AndOp(seen, ctx.emit(graph.LessOp(key_index, ctx.emit(graph.AddOp(lengths, last)).output)).output)).output
    if mask is None:
        return seen
    return ctx.emit(graph.AddOp(additive(ctx, mask), additive(ctx, seen))).output


def node_constant(ctx: NodeContext, what: str, array: np.ndarray) -> SSAValue:
    """A constant of this node's (materialized constants are shared by name)."""
    return ctx.importer.materialize(f"{ctx.node.name or ctx.node.output[0]}.{what}", array)


def additive(ctx: NodeContext, mask: SSAValue) -> SSAValue:
    """A boolean mask (true = attend) as 0 / -inf; an additive one as it is."""
    if graph.is_float(mask.type.element_type):
        return mask
    zero = node_constant(ctx, "attend", np.zeros((), dtype=ctx.dtype(0)))
    minus_inf = node_constant(ctx, "masked", np.array(-np.inf, dtype=ctx.dtype(0)))
    return ctx.emit(graph.WhereOp(mask, zero, minus_inf)).output


def causal_with_offset(ctx: NodeContext, mask: SSAValue | None, queries: int, keys: int, offset: int) -> SSAValue:
    """The mask and the causal rule for queries that follow `offset` cached keys, as one
    additive mask (0 where key j <= query i + offset, -inf elsewhere)."""
    dtype = ctx.dtype(0)
    seen = np.arange(keys)[None, :] <= np.arange(queries)[:, None] + offset
    triangle = node_constant(ctx, "causal", np.where(seen, 0.0, -np.inf).astype(dtype))
    return triangle if mask is None else ctx.emit(graph.AddOp(additive(ctx, mask), triangle)).output
