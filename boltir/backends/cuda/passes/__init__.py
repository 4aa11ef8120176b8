"""The CUDA target's passes, registered in bolt-opt under their names beside the
target-independent ones (`boltir.passes`)."""

PASS_MODULES: dict[str, tuple[str, str]] = {
    "select-kernels": ("boltir.backends.cuda.passes.select_kernels", "SelectKernelsPass"),
    "fuse-conv-pool": ("boltir.backends.cuda.passes.fuse_conv_pool", "FuseConvPoolPass"),
    "fuse-conv-space-to-depth": ("boltir.backends.cuda.passes.fuse_conv_space_to_depth", "FuseConvSpaceToDepthPass"),
    "fuse-depthwise-pointwise": ("boltir.backends.cuda.passes.fuse_depthwise_pointwise", "FuseDepthwisePointwisePass"),
    "fuse-output-cast": ("boltir.backends.cuda.passes.fuse_output_cast", "FuseOutputCastPass"),
    "lower-op-to-cutlass": ("boltir.backends.cuda.passes.lower_op_to_cutlass", "LowerOpToCutlassPass"),
}
"""Pass name -> (module, class)."""
