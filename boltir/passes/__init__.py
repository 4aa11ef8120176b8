"""boltir's passes: one module per pass, the patterns first and the ModulePass last;
the helpers several passes share are in `common`, and statistics in `statistics`.

`PASS_MODULES` names the target-independent passes; `boltir.pipelines.available_passes`
adds the CUDA target's (`boltir.backends.cuda.passes`) and plugins'.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

PASS_MODULES: dict[str, tuple[str, str]] = {
    "fold-constants": ("boltir.passes.fold_constants", "FoldConstantsPass"),
    "recognize-activations": ("boltir.passes.recognize_activations", "RecognizeActivationsPass"),
    "recognize-attention": ("boltir.passes.recognize_attention", "RecognizeAttentionPass"),
    "fold-batchnorm": ("boltir.passes.fold_batchnorm", "FoldBatchNormPass"),
    "reparameterize-branches": ("boltir.passes.reparameterize_branches", "ReparameterizeBranchesPass"),
    "space-to-depth-stem": ("boltir.passes.space_to_depth_stem", "SpaceToDepthStemPass"),
    "convert-layout": ("boltir.passes.convert_layout", "ConvertLayoutPass"),
    "convert-precision": ("boltir.passes.convert_precision", "ConvertPrecisionPass"),
    "lower-graph-to-op": ("boltir.passes.lower_graph_to_op", "LowerGraphToOpPass"),
    "pad-alignment": ("boltir.passes.pad_alignment", "PadAlignmentPass"),
    "fuse-space-to-depth": ("boltir.passes.fuse_space_to_depth", "FuseSpaceToDepthPass"),
    "commute-transposes": ("boltir.passes.commute_transposes", "CommuteTransposesPass"),
    "fold-attention-layouts": ("boltir.passes.fold_attention_layouts", "FoldAttentionLayoutsPass"),
    "fuse-epilogue": ("boltir.passes.fuse_epilogue", "FuseEpiloguePass"),
    "merge-qkv": ("boltir.passes.merge_qkv", "MergeQkvPass"),
    "form-persistent-kernels": ("boltir.passes.form_persistent_kernels", "FormPersistentKernelsPass"),
    "fuse-elementwise": ("boltir.passes.fuse_elementwise", "FuseElementwisePass"),
    "plan-memory": ("boltir.passes.plan_memory", "PlanMemoryPass"),
    "mask-padded-keys": ("boltir.passes.mask_padded_keys", "MaskPaddedKeysPass"),
}
"""Pass name -> (module, class). Each module holds one pass."""


def pass_loader(module_name: str, class_name: str) -> Callable[[], type[ModulePass]]:
    """A lazy factory of one pass class (xDSL's convention): a tool imports only the
    passes it runs."""
    return lambda: getattr(importlib.import_module(module_name), class_name)
