"""mask-padded-keys: attentions whose keys a bucketed build pads read the real number of
keys from a new input, `key_lengths`, so that the padded keys are masked.

A bucket of sequence length S runs calls of n <= S tokens padded to S. Each query must
then ignore the keys at positions >= n: `op.attention`'s key_lengths (i32 [B]) masks
exactly those, inside the fused kernel, at no cost beyond a comparison per key tile. The
bucketed compiler marks such attentions (the `padded_keys` unit attribute, from the
`bucket_axes` analysis at the graph level) and the runtime fills `key_lengths` with n.

Requires: op level; the marked op.attention ops have no key_lengths yet and one batch
size B among them.
Guarantees: @main takes one more argument, last, named `key_lengths` (tensor<Bxi32>),
when any attention is marked; every marked attention reads it as its key_lengths and
loses the mark. With key_lengths equal to the key count, the module computes what it
computed before.

Statistics: "attentions masked".
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.passes import ModulePass

from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects.graph import INPUT_NAME_ATTR
from boltir.ir import find_entry
from boltir.passes import statistics

KEY_LENGTHS_INPUT = "key_lengths"
PADDED_KEYS_ATTR = "padded_keys"
"""The mark the bucketed compiler puts on an op.attention whose keys are padded."""


def add_argument(entry, arg_type: TensorType, name: str):
    """A new last argument of `entry`, named `name`."""
    args = entry.body.block.args
    value = entry.body.block.insert_arg(arg_type, len(args))
    inputs = [*entry.function_type.inputs.data, arg_type]
    entry.function_type = FunctionType.from_lists(inputs, list(entry.function_type.outputs.data))
    old = list(entry.arg_attrs.data) if entry.arg_attrs is not None else [DictionaryAttr({}) for _ in inputs[:-1]]
    entry.arg_attrs = ArrayAttr([*old, DictionaryAttr({INPUT_NAME_ATTR: StringAttr(name)})])
    return value


class MaskPaddedKeysPass(ModulePass):
    """Requires: op level, marked attentions without key_lengths. Guarantees: they read
    key_lengths from a new last argument of @main."""

    name = "mask-padded-keys"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        entry = find_entry(module)
        marked = [op for op in entry.walk() if isinstance(op, ops.AttentionOp) and PADDED_KEYS_ATTR in op.attributes]
        if not marked:
            return
        batches = {op.head_shapes()[0][0] for op in marked}
        for op in marked:
            if op.key_lengths is not None:
                raise BoltError("op.attention has key_lengths already; its padded keys cannot be masked",
                                format_location(op.location))
        if len(batches) != 1:
            raise BoltError(f"the attentions with padded keys have different batch sizes ({sorted(batches)}); "
                            "one key_lengths input cannot serve them")
        lengths = add_argument(entry, TensorType(IntegerType(32), (batches.pop(),)), KEY_LENGTHS_INPUT)
        for op in marked:
            layout = op.prop_value("layout")
            masked = ops.AttentionOp(op.q, op.k, op.v, bias=op.bias, key_lengths=lengths, layout=layout,
                                     scale=op.prop_value("scale"), causal=op.causal is not None)
            masked.attributes.update({k: v for k, v in op.attributes.items() if k != PADDED_KEYS_ATTR})
            masked.location = op.location
            op.parent_block().insert_op_before(masked, op)
            op.results[0].replace_all_uses_with(masked.results[0])
            op.detach()
            op.erase()
            statistics.count(self, "attentions masked")

