"""Launch arguments in the emitter's ABI, and the ctypes wrapper around a kernel library."""

from __future__ import annotations

import re

import pytest

from boltir.backends.cuda.codegen.cutlass_kernels import (
    emit_translation_unit,
    kernel_name,
    launch_arguments,
)
from boltir.backends.cuda.toolchain.kernel_library import KernelLibrary
from boltir.diagnostics import BoltError
from tests.backends.test_cutlass_kernels import (
    TILE_DW,
    TILE_SMALL,
    b2b_conv_ir,
    b2b_gemm_ir,
    conv_ir,
    depthwise_ir,
    gemm_ir,
    one_op,
)


def signature(source: str, name: str) -> list[str]:
    """The launcher's parameter names, from the emitted source."""
    match = re.search(rf'extern "C" int {name}\(([^)]*)\)', source)
    assert match, f"no launcher {name}"
    return [param.split()[-1].lstrip("*") for param in match.group(1).replace("\n", " ").split(",")]


def check_abi(op, expected_pointers: list[str], expected_problem: tuple[int, ...]):
    arguments = launch_arguments(op)
    assert arguments.name == kernel_name(op)
    assert arguments.problem == expected_problem
    params = signature(emit_translation_unit([op]), arguments.name)
    # pointers, the problem integers, then workspace, workspace_bytes, stream
    assert params[: len(expected_pointers)] == expected_pointers
    assert len(params) == len(arguments.operands) + len(arguments.problem) + 3
    assert params[-3:] == ["workspace", "workspace_bytes", "stream"]
    return arguments


def test_gemm_arguments():
    op = one_op(gemm_ir(a=(100, 64), b=(256, 64), out=(100, 256), layout_b="col", bias=True, residual=True,
                        epilogue="bias, relu, residual = add"))
    arguments = check_abi(op, ["a", "b", "bias", "residual", "d"], (1, 100, 256, 64))
    assert arguments.operands == (op.a, op.b, op.bias, op.residual, op.output)


def test_batched_gemm_with_a_column_major_a():
    op = one_op(gemm_ir(a=(3, 64, 32), b=(3, 64, 128), out=(3, 32, 128), layout_a="col", tile=TILE_SMALL))
    arguments = check_abi(op, ["a", "b", "bias", "residual", "d"], (3, 32, 128, 64))
    assert arguments.operands[2:4] == (None, None)


def test_conv_arguments_take_the_top_and_left_pads():
    op = one_op(conv_ir(x=(2, 16, 16, 64), w=(32, 3, 3, 64), out=(2, 8, 8, 32), strides=(2, 2), pads=(1, 0, 0, 1),
                        bias=True, epilogue="bias, relu"))
    check_abi(op, ["input", "filter", "bias", "residual", "output"], (2, 16, 16, 64, 32, 3, 3, 8, 8, 1, 0, 2, 2, 1, 1))


def test_depthwise_arguments():
    op = one_op(depthwise_ir(tile=TILE_DW))
    check_abi(op, ["input", "filter", "bias", "residual", "output"], (2, 16, 16, 64, 64, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1))


def test_b2b_gemm_arguments():
    op = one_op(b2b_gemm_ir(m=256, k0=64, n0=64, n1=128))
    check_abi(op, ["a", "b0", "b1", "bias0", "bias1", "d"], (256, 64, 64, 256, 128, 64))


def test_b2b_conv_arguments():
    op = one_op(b2b_conv_ir(x=(2, 8, 8, 64), k0=64, k1=128))
    check_abi(op, ["input", "filter0", "filter1", "bias0", "bias1", "output"], (2, 8, 8, 64, 64, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 128))


def test_a_missing_library_is_a_clear_error(tmp_path):
    with pytest.raises(BoltError, match=r"cannot load the kernel library .*nothing\.so"):
        KernelLibrary(tmp_path / "nothing.so")


@pytest.mark.slow
def test_a_compiled_library_reports_launch_errors(tmp_path, monkeypatch):
    """One GEMM compiled and linked for real: its workspace query answers on the host, and
    a launch without a GPU (or with a null pointer for a required operand) comes back as
    a BoltError carrying boltir_error_string's message, not a crash."""
    from boltir.backends.cuda.toolchain import nvcc

    try:
        nvcc.Toolchain.find()
    except BoltError as error:
        pytest.skip(f"no CUDA toolchain here: {error}")
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path / "cache"))
    op = one_op(gemm_ir(a=(64, 64), b=(128, 64), out=(64, 128), layout_b="col", bias=True, epilogue="bias, relu",
                        tile=TILE_SMALL))
    path = nvcc.build_shared_library([nvcc.CompileJob(kernel_name(op), emit_translation_unit([op]), "sm80")],
                                     tmp_path / "kernels.so", progress=False)
    library = KernelLibrary(path)
    assert library.workspace_size(op) == 0
    with pytest.raises(BoltError, match=rf"{kernel_name(op)} failed with code \d+: .+"):
        # null A, B and D with a bias epilogue: refused before (or at) the launch
        library.launch(op, [None, None, None, None, None])
    with pytest.raises(BoltError, match="takes 5 pointers, got 2"):
        library.launch(op, [None, None])
