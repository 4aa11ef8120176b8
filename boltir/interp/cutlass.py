"""Numpy implementations of the `cutlass` ops: what each template instance computes.

The op-level kernels do the arithmetic (boltir/interp/op.py); here is what a template
adds: split-k (K in slices, partial sums added in f32, as the serial reduction does),
the depthwise kernel, and the b2b kernels' intermediate, rounded to the element type
between the two GEMMs.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from boltir.dialects import cutlass
from boltir.interp.graph import finish, widen
from boltir.interp.op import apply_epilogue, as_row_major, conv2d, optional_operands


def split_k_matmul(a: np.ndarray, b: np.ndarray, slices: int) -> np.ndarray:
    """A @ B with K cut into `slices` slices whose f32 partial products are summed."""
    k = a.shape[-1]
    bounds = np.linspace(0, k, slices + 1).astype(int)
    total = None
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        partial = np.matmul(a[..., lo:hi], b[..., lo:hi, :])
        total = partial if total is None else total + partial
    return total


@register_impls
class CutlassFunctions(InterpreterFunctions):
    """Interpreter implementations of the `cutlass` dialect."""

    @impl(cutlass.GemmOp)
    def run_gemm(self, interpreter: Interpreter, op: cutlass.GemmOp, args: tuple):
        a, b = (widen(v) for v in args[:2])
        bias, residual = optional_operands(op, args, ("bias", "residual"))
        a = as_row_major(a, op.prop_value("layout_a"))
        b = as_row_major(b, op.prop_value("layout_b"))
        acc = split_k_matmul(a, b, op.prop_value("split_k"))
        return (finish(op, apply_epilogue(acc, op.epilogue, bias, residual, channel_axis=-1)),)

    def _conv2d_fprop(self, interpreter: Interpreter, op: cutlass.Conv2dFpropOp | cutlass.DepthwiseConv2dFpropOp, args: tuple):
        """conv2d_fprop and depthwise_conv2d_fprop: an NHWC/OHWI conv with its epilogue."""
        x, w = args[:2]
        bias, residual = optional_operands(op, args, ("bias", "residual"))
        strides, pads, dilations, groups = op.window()
        out = conv2d(x, w, "NHWC", "OHWI", strides, pads, dilations, groups, op.epilogue, bias, residual, op.output.type.get_shape())
        return (finish(op, out),)

    run_conv2d_fprop = impl(cutlass.Conv2dFpropOp)(_conv2d_fprop)
    run_depthwise_conv2d_fprop = impl(cutlass.DepthwiseConv2dFpropOp)(_conv2d_fprop)

    @impl(cutlass.B2bGemmOp)
    def run_b2b_gemm(self, interpreter: Interpreter, op: cutlass.B2bGemmOp, args: tuple):
        a, b0, b1 = args[:3]
        bias0, bias1 = optional_operands(op, args, ("bias0", "bias1"))
        first = finish(op, apply_epilogue(np.matmul(widen(a), as_row_major(widen(b0), "col")), op.epilogue0, bias0, None, -1))
        out = apply_epilogue(np.matmul(widen(first), as_row_major(widen(b1), "col")), op.epilogue1, bias1, None, -1)
        return (finish(op, out),)

    @impl(cutlass.B2bConv2dOp)
    def run_b2b_conv2d(self, interpreter: Interpreter, op: cutlass.B2bConv2dOp, args: tuple):
        x, w0, w1 = args[:3]
        bias0, bias1 = optional_operands(op, args, ("bias0", "bias1"))
        window = (op.prop_value("strides"), op.prop_value("pads"), op.prop_value("dilations"), 1)
        shape = op.output.type.get_shape()
        first = finish(op, conv2d(x, w0, "NHWC", "OHWI", *window, op.epilogue0, bias0, None, shape))
        out = conv2d(first, w1, "NHWC", "OHWI", (1, 1), (0, 0, 0, 0), (1, 1), 1, op.epilogue1, bias1, None, shape)
        return (finish(op, out),)
