"""PyTorch importer: an `nn.Module` becomes a `graph` module through `torch.export`.

    module = import_module(model, (torch.randn(1, 3, 224, 224),))

- The module is exported with `torch.export.export(module.eval(), example_inputs)` and
  decomposed to the core ATen opset (`run_decompositions()` with torch's default table).
  The example inputs fix every shape: the result is fully static.
- `@main` takes the user inputs, named as in the exported graph signature (`x`,
  `input_ids`...), and returns the user outputs (`output_0`, `output_1`... or the keys
  of a returned dict or dataclass).
- Parameters, buffers and lifted tensor constants become weights named by their state
  dict key (`conv1.weight`), through `ModelBuilder.constant`.
- A node whose inputs are all known at import (weights, `arange`, `full`...) is
  evaluated by torch right away and becomes a constant; a weight is only written into
  the IR where a graph op reads it.
- Every other node is converted by the converter registered for its ATen overload in
  the table below (`@converter("add.Tensor")`), one small function per op. An op that is
  neither convertible nor foldable gets one error that names it and lists the supported
  ones.
- `import_exported_program` takes an `ExportedProgram` that the caller exported (with
  options of their own); it is decomposed the same way before import.

torch is an optional dependency (`pip install boltir[torch]`): it is imported on first
use, so `import boltir` never needs it.

This module is the API. The importer lives in `torch_importer.py`, the op converters in
`torch_converters.py` and `torch_nn_converters.py`, and what they share (the
`NodeContext`, torch's dtypes and shapes, loading torch) in `torch_context.py`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from boltir.diagnostics import BoltError
from boltir.frontends.torch_context import INSTALL_HINT, NodeContext, first_line, is_tensor, require_torch
from boltir.frontends.torch_importer import TorchImporter, converters, supported_ops
from boltir.ir import verify_module


def export_module(module, example_inputs):
    """`torch.export.export(module.eval(), example_inputs)`, with torch's failures as
    one-line BoltErrors."""
    torch = require_torch()
    if not isinstance(module, torch.nn.Module):
        raise BoltError(f"import_module expects a torch.nn.Module, got {type(module).__name__}")
    if is_tensor(example_inputs):
        example_inputs = (example_inputs,)
    if not isinstance(example_inputs, tuple | list):
        raise BoltError(f"example_inputs must be a tuple of tensors, got {type(example_inputs).__name__}")
    try:
        return torch.export.export(module.eval(), tuple(example_inputs))
    except Exception as error:
        raise BoltError(
            f"torch.export failed on {type(module).__name__}: {type(error).__name__}: {first_line(error)}"
        ) from error


def decompose(program):
    """The program decomposed to core ATen with torch's default decomposition table."""
    try:
        return program.run_decompositions()
    except Exception as error:
        raise BoltError(
            f"torch.export's decomposition to core ATen failed: {type(error).__name__}: {first_line(error)}"
        ) from error


def import_exported_program(program, *, decompose_first: bool = True) -> ModuleOp:
    """Imports a `torch.export.ExportedProgram` into a verified graph module. It is
    decomposed to core ATen first, unless `decompose_first` is False (then it is read as
    it is, and must use only ops that the converter table knows)."""
    torch = require_torch()
    if not isinstance(program, torch.export.ExportedProgram):
        raise BoltError(f"import_exported_program expects a torch.export.ExportedProgram, got {type(program).__name__}")
    if decompose_first:
        program = decompose(program)
    try:
        module = TorchImporter(program).run()
    except BoltError:
        raise
    except Exception as error:
        message = f"internal error in the PyTorch frontend: {type(error).__name__}: {first_line(error)}"
        raise BoltError(message) from error
    verify_module(module)
    return module


def import_module(module, example_inputs: tuple = ()) -> ModuleOp:
    """Exports `module` in eval mode on `example_inputs` (which fix every shape),
    decomposes it to core ATen, and imports it into a verified graph module."""
    return import_exported_program(export_module(module, example_inputs))


__all__ = [
    "INSTALL_HINT",
    "NodeContext",
    "TorchImporter",
    "converters",
    "decompose",
    "export_module",
    "import_exported_program",
    "import_module",
    "require_torch",
    "supported_ops",
]
