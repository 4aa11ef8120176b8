"""boltir's passes: one module per pass, the patterns first and the ModulePass last;
the helpers several passes share are in `common`, and statistics in `statistics`.

`registered_passes` is what bolt-opt and boltc load: names to lazy factories, as xDSL
does, so that a tool only imports the passes it runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

PASS_MODULES: dict[str, tuple[str, str]] = {
    "fold-constants": ("boltir.passes.fold_constants", "FoldConstantsPass"),
    "recognize-activations": ("boltir.passes.recognize_activations", "RecognizeActivationsPass"),
    "fold-batchnorm": ("boltir.passes.fold_batchnorm", "FoldBatchNormPass"),
    "reparameterize-branches": ("boltir.passes.reparameterize_branches", "ReparameterizeBranchesPass"),
    "convert-layout": ("boltir.passes.convert_layout", "ConvertLayoutPass"),
    "convert-precision": ("boltir.passes.convert_precision", "ConvertPrecisionPass"),
    "lower-graph-to-op": ("boltir.passes.lower_graph_to_op", "LowerGraphToOpPass"),
    "pad-alignment": ("boltir.passes.pad_alignment", "PadAlignmentPass"),
    "fuse-epilogue": ("boltir.passes.fuse_epilogue", "FuseEpiloguePass"),
    "form-persistent-kernels": ("boltir.passes.form_persistent_kernels", "FormPersistentKernelsPass"),
    "fuse-elementwise": ("boltir.passes.fuse_elementwise", "FuseElementwisePass"),
    "select-kernels": ("boltir.passes.select_kernels", "SelectKernelsPass"),
    "lower-op-to-cutlass": ("boltir.passes.lower_op_to_cutlass", "LowerOpToCutlassPass"),
    "plan-memory": ("boltir.passes.plan_memory", "PlanMemoryPass"),
}
"""Pass name -> (module, class). Each module holds one pass."""


def _loader(module_name: str, class_name: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(importlib.import_module(module_name), class_name)


def registered_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """boltir's own passes by name, as lazy factories (xDSL's convention)."""
    return {name: _loader(*target) for name, target in PASS_MODULES.items()}
