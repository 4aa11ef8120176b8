"""lower-op-to-cutlass: op-level GEMMs, convs and b2b ops with a chosen `kernel` become
`cutlass` template instances.

Requires: select-kernels ran (every op to lower has its `kernel` attribute).
Guarantees:
- op.gemm -> cutlass.gemm, op.conv2d (NHWC, OHWI) -> cutlass.conv2d_fprop or, when
  depthwise, cutlass.depthwise_conv2d_fprop, op.b2b_* -> cutlass.b2b_*, with the chosen
  parameters; b2b residency is the selector's, checked against example 13's rules by the
  cutlass verifiers;
- the whole epilogue stays inside the kernel wherever the template can express it;
  where it cannot, the part it cannot express (second activation, residual, activation,
  in that order) is kept as a separate `op.elementwise` after the kernel, counted under
  "fusions kept as separate ops" in --pass-stats;
- ops no template computes (grouped convs, NCHW convs) stay as they are, counted;
- depthwise convs whose choice is our own kernel ("depthwise_direct") stay op.conv2d,
  their choice attached, for that kernel's generator (codegen/depthwise_kernels.py),
  which computes the whole epilogue; a choice it cannot run is a one-line error;
- GEMMs whose choice is our few-rows kernel ("skinny_gemm") stay op.gemm likewise, for
  codegen/skinny_gemm_kernels.py, and those whose choice is our Hopper GEMM with K split
  among warp groups ("wgsplit_gemm"), for codegen/wgsplit_gemm_kernels.py;
- convs whose choice is our kernel for few input channels ("stem_conv") stay op.conv2d
  likewise, for codegen/stem_conv_kernels.py, and those whose choice is our split-reduction
  conv for few output pixels ("splitk_conv"), for codegen/splitk_conv_kernels.py, and our
  1x1 conv for narrow channel counts ("stream_conv"), for codegen/stream_conv_kernels.py;
- an op.conv2d_max_pool (fuse-conv-pool) and an op.space_to_depth_conv2d
  (fuse-conv-space-to-depth) stay, their halo_conv choice attached, for
  codegen/halo_conv_kernels.py; an op.depthwise_pointwise_conv2d
  (fuse-depthwise-pointwise) stays, its depthwise_pointwise choice attached, for
  codegen/depthwise_pointwise_kernels.py;
- --pass-stats counts the instances of each family by CUTLASS generation (2.x, 3.x);
- the module computes the same function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, f16, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from boltir.backends.cuda.codegen import (
    depthwise_kernels,
    depthwise_pointwise_kernels,
    halo_conv_kernels,
    skinny_gemm_kernels,
    splitk_conv_kernels,
    stem_conv_kernels,
    stream_conv_kernels,
    tiled_families,
    wgsplit_gemm_kernels,
)
from boltir.backends.cuda.codegen.cutlass_kernels import unsupported_reason
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.dialects.cutlass import TileAttr
from boltir.dialects.elementwise_body import as_elementwise
from boltir.dialects.graph import i64_array, i64_attr, tensor_shape
from boltir.passes import statistics
from boltir.passes.common import constant_of
from boltir.weights import make_weight_attr

EPILOGUE_STEPS = ("activation2", "residual", "activation")
"""What the lowering peels off an epilogue a template cannot express, outermost first."""


def template_properties(choice: KernelChoice) -> dict:
    props = {
        "arch": StringAttr(choice.arch),
        "accumulator": f16 if choice.accumulator == "f16" else f32,
        "tile": TileAttr.make(choice.tile),
        "alignment": i64_array(choice.alignment),
        "swizzle": i64_attr(choice.swizzle),
    }
    if choice.cluster is not None:
        props["cluster"] = i64_array(choice.cluster)
    if choice.kernel_schedule is not None:
        props["kernel_schedule"] = StringAttr(choice.kernel_schedule)
    return props


def peel(epilogue: ops.EpilogueAttr, step: str) -> tuple[ops.EpilogueAttr, str] | None:
    """The epilogue without its outermost `step`, and what was removed; None if absent."""
    if step == "activation2" and epilogue.second_activation.kind != "none":
        return epilogue.with_changes(activation2=ops.Activation()), "activation2"
    if step == "residual" and epilogue.residual_kind != "none" and epilogue.second_activation.kind == "none":
        return epilogue.with_changes(residual="none"), "residual"
    if step == "activation" and epilogue.first_activation.kind != "none" and epilogue.residual_kind == "none":
        return epilogue.with_changes(activation=ops.Activation()), "activation"
    return None


class CutlassLowering:
    def __init__(self, pass_: ModulePass):
        self.pass_ = pass_

    def build(self, op: Operation, choice: KernelChoice, epilogue: ops.EpilogueAttr, residual: SSAValue | None) -> Operation:
        props = template_properties(choice)
        if isinstance(op, ops.GemmOp):
            props.update(
                layout_a=StringAttr(op.prop_value("layout_a")),
                layout_b=StringAttr(op.prop_value("layout_b")),
                split_k=i64_attr(choice.split_k),
                epilogue=epilogue,
            )
            return cutlass.GemmOp.build(
                operands=[op.a, op.b, [op.bias] if op.bias else [], [residual] if residual else []],
                properties=props,
                result_types=[op.output.type],
            )
        if isinstance(op, ops.Conv2dOp):
            window = {
                "strides": i64_array(op.prop_value("strides")),
                "pads": i64_array(op.prop_value("pads")),
                "dilations": i64_array(op.prop_value("dilations")),
                "epilogue": epilogue,
            }
            operands = [op.input, op.filter, [op.bias] if op.bias else [], [residual] if residual else []]
            if choice.family == "depthwise_conv2d_fprop":
                # CUTLASS's direct depthwise conv is a SIMT kernel.
                props["op_class"] = StringAttr("simt")
                return cutlass.DepthwiseConv2dFpropOp.build(operands=operands, properties={**props, **window}, result_types=[op.output.type])
            props.update(window, iterator_algorithm=StringAttr(choice.iterator_algorithm), split_k=i64_attr(choice.split_k))
            return cutlass.Conv2dFpropOp.build(operands=operands, properties=props, result_types=[op.output.type])
        raise AssertionError(op.name)

    def lower_single(self, op: ops.GemmOp | ops.Conv2dOp, choice: KernelChoice) -> list[Operation] | None:
        """The cutlass op, and the elementwise ops of whatever epilogue it cannot take."""
        epilogue, residual = op.epilogue, op.residual
        peeled: list[str] = []
        new = self.build(op, choice, epilogue, residual)
        while (reason := unsupported_reason(new)) is not None:
            for step in EPILOGUE_STEPS:
                if (result := peel(epilogue, step)) is not None:
                    epilogue, removed = result
                    peeled.append(removed)
                    if removed == "residual":
                        residual = None
                    break
            else:
                statistics.note(self.pass_, f"left {op.name} at {format_location(op.location)}: {reason}")
                new.erase()  # a detached op still counts as a user of its operands
                return None
            new.erase()
            new = self.build(op, choice, epilogue, residual)
        new.location = op.location
        new_ops: list[Operation] = [new]
        value = new.results[0]
        for step in reversed(peeled):  # the innermost peeled step comes first
            if step == "activation":
                act = op.epilogue.first_activation
                extra = ops.UnaryOp(act.kind, value, act.args)
            elif step == "residual":
                extra = ops.BinaryOp(op.epilogue.residual_kind, value, op.residual)
            else:
                act = op.epilogue.second_activation
                extra = ops.UnaryOp(act.kind, value, act.args)
            fused = as_elementwise(extra)
            extra.erase()
            fused.location = op.location
            new_ops.append(fused)
            value = fused.output
            statistics.count(self.pass_, "fusions kept as separate ops")
        return new_ops

    def lower_b2b(self, op: ops.B2bGemmOp | ops.B2bConv2dOp, choice: KernelChoice) -> list[Operation] | None:
        """The cutlass op (after any weight it transposes); None if no template runs it."""
        props = template_properties(choice)
        props.update(tile1=TileAttr.make(choice.tile1), residency=StringAttr(choice.residency), epilogue0=op.epilogue0, epilogue1=op.epilogue1)
        new_ops: list[Operation] = []
        if isinstance(op, ops.B2bGemmOp):
            weights = [self.as_column_major(op, w, op.prop_value(name), new_ops) for w, name in ((op.b0, "layout_b0"), (op.b1, "layout_b1"))]
            if op.prop_value("layout_a") != "row":
                raise BoltError("a b2b GEMM's A must be row-major", format_location(op.location))
            new = cutlass.B2bGemmOp.build(
                operands=[op.a, *weights, [op.bias0] if op.bias0 else [], [op.bias1] if op.bias1 else []],
                properties=props,
                result_types=[op.output.type],
            )
        else:
            props.update(strides=i64_array(op.prop_value("strides")), pads=i64_array(op.prop_value("pads")), dilations=i64_array(op.prop_value("dilations")))
            new = cutlass.B2bConv2dOp.build(
                operands=[op.input, op.filter0, op.filter1, [op.bias0] if op.bias0 else [], [op.bias1] if op.bias1 else []],
                properties=props,
                result_types=[op.output.type],
            )
        new.location = op.location
        if (reason := unsupported_reason(new)) is not None:
            statistics.note(self.pass_, f"left {op.name} at {format_location(op.location)}: {reason}")
            new.erase()
            for extra in reversed(new_ops):  # transposed weights nobody will read
                extra.erase()
            return None
        return [*new_ops, new]

    def as_column_major(self, op: Operation, weight: SSAValue, layout: str, new_ops: list[Operation]) -> SSAValue:
        """B as N x K (column-major K x N), transposing a constant at compile time."""
        if layout == "col":
            return weight

        array = constant_of(weight)
        if array is None:
            raise BoltError("a b2b GEMM's row-major weight must be a constant", format_location(op.location))
        constant = ops.ConstantOp(make_weight_attr((weight.name_hint or "weight") + ".col", np.ascontiguousarray(array.T)))
        constant.location = op.location
        new_ops.append(constant)
        return constant.output


FAMILIES_OF: dict[type, tuple[str, ...]] = {
    ops.GemmOp: ("gemm", skinny_gemm_kernels.FAMILY, wgsplit_gemm_kernels.FAMILY),
    ops.Conv2dOp: ("conv2d_fprop", "depthwise_conv2d_fprop", depthwise_kernels.FAMILY, stem_conv_kernels.FAMILY,
                   splitk_conv_kernels.FAMILY, halo_conv_kernels.FAMILY, stream_conv_kernels.FAMILY),
    ops.Conv2dMaxPoolOp: (halo_conv_kernels.FAMILY,),
    ops.SpaceToDepthConv2dOp: (halo_conv_kernels.FAMILY,),
    ops.B2bGemmOp: ("b2b_gemm",),
    ops.B2bConv2dOp: ("b2b_conv2d",),
    ops.DepthwisePointwiseConv2dOp: (depthwise_pointwise_kernels.FAMILY,),
}
"""The template families that can compute each op-level op."""


def read_choice(target: Operation) -> KernelChoice:
    """The op's kernel choice; a BoltError at the op's location if it is malformed or
    names a family that cannot compute the op."""
    try:
        choice = KernelChoice.from_attr(target.attributes[KERNEL_ATTR])
        families = FAMILIES_OF.get(type(target), ())
        if not families:
            raise BoltError(f"no CUTLASS template computes {target.name}")
        if choice.family not in families:
            raise BoltError(f"a {choice.family} kernel cannot compute {target.name}")
        if choice.family in ("depthwise_conv2d_fprop", depthwise_kernels.FAMILY) and target.prop_value("layout") == "NHWC":
            channels, groups = tensor_shape(target.input.type)[-1], target.prop_value("groups")
            if not groups == channels == tensor_shape(target.output.type)[-1]:
                raise BoltError(f"a depthwise_conv2d_fprop kernel cannot compute a conv with {groups} groups of {channels} channels")
    except BoltError as error:
        raise BoltError(f"bad kernel attribute on {target.name}: {error.message}", format_location(target.location)) from error
    return choice


def keep_for_own_kernel(pass_: ModulePass, target: Operation, generator) -> None:
    """An op chosen for one of our tiled families stays as it is (the family's generator
    computes it with its whole epilogue); a BoltError where that kernel cannot run it (a
    hand-written or stale choice)."""
    if (reason := generator.unsupported_reason(target)) is not None:
        raise BoltError(f"bad kernel attribute on {target.name}: {reason}", format_location(target.location))
    statistics.count(pass_, f"{generator.FAMILY} kernels ({target.name} kept)")


@dataclass(frozen=True)
class LowerOpToCutlassPass(ModulePass):
    """Requires: select-kernels ran. Guarantees: chosen ops are cutlass template
    instances; what a template cannot fuse follows it as elementwise ops; same function."""

    name = "lower-op-to-cutlass"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowering = CutlassLowering(self)
        for target in list(op.walk()):
            if KERNEL_ATTR not in target.attributes:
                continue
            choice = read_choice(target)
            if isinstance(target, ops.Conv2dOp | ops.B2bConv2dOp) and (
                target.prop_value("layout") != "NHWC" or target.prop_value("filter_layout") != "OHWI"
            ):
                statistics.note(self, f"left {target.name} at {format_location(target.location)}: not NHWC/OHWI")
                statistics.count(self, "ops without a template")
                continue
            if choice.family in tiled_families.BY_FAMILY:
                keep_for_own_kernel(self, target, tiled_families.BY_FAMILY[choice.family])
                continue
            if isinstance(target, ops.Conv2dOp) and target.prop_value("groups") > 1 and choice.family != "depthwise_conv2d_fprop":
                statistics.note(self, f"left op.conv2d at {format_location(target.location)}: grouped conv")
                statistics.count(self, "ops without a template")
                continue
            if isinstance(target, ops.B2bGemmOp | ops.B2bConv2dOp):
                new_ops = lowering.lower_b2b(target, choice)
            else:
                new_ops = lowering.lower_single(target, choice)
            if new_ops is None:
                statistics.count(self, "ops without a template")
                continue
            block = target.parent
            block.insert_ops_before(new_ops, target)
            target.results[0].replace_all_uses_with(new_ops[-1].results[0])
            block.erase_op(target)
            template = next(new for new in new_ops if isinstance(new, cutlass.TemplateOp))
            statistics.count(self, f"{template.name} instances")
            generation = "3.x" if template.prop_value("arch") == "sm90" else "2.x"
            statistics.count(self, f"CUTLASS {generation} {template.name.removeprefix('cutlass.')} instances")

