"""The op.space_to_depth data kernel (boltir/backends/cuda/codegen/space_to_depth_kernel.py).

Without a GPU: the stem's instance writes a whole 16-channel f16 pixel per thread (two
16-byte stores, every channel's source offset a constant), wider pixels and NCHW results
take V elements per thread, copies name bits (f16 and bf16 share a kernel), keys separate
shapes, pads and conversions. `slow`: the data_kernel_cases' instances compile with the
real nvcc without a warning, and the stem's V = 8 kernel stores 16 bytes at a time and
loads its 12 input values with no division left. `gpu` runs of these cases are
tests/backends/test_data_kernels.py's (every case of tests/support/data_kernel_cases.py).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from boltir.backends.cuda.codegen import data_kernels as dk
from boltir.backends.cuda.toolchain import nvcc
from boltir.diagnostics import BoltError
from tests.support import data_kernel_cases

STEM = data_kernel_cases.space_to_depth((32, 3, 224, 224), 2, "f32", "f16", pads=(3, 3, 3, 3), channels=16)


def prepared(case: data_kernel_cases.Case):
    return data_kernel_cases.prepare(case).op


def test_the_stem_writes_whole_pixels():
    op = prepared(STEM)
    key = dk.instance_key(op)
    assert key == (
        "space_to_depth f32->f16 in=[32,3,224,224] NCHW->NHWC block=2 pads=[3,3,3,3] out=[32,115,115,16] "
        "vector=8 whole-pixel index=int"
    )
    assert dk.family(op) == "space_to_depth" and dk.supports(op) and not dk.is_fallback(op)
    source = dk.emit_instance(op).source
    assert "constexpr Index kThreads = kCount / 16;  // one per pixel" in source
    assert "if (k >= 12) {" in source
    assert "const Index r = oh * 2 + k / 6 - 3;" in source and "const Index col = ow * 2 + (k / 3) % 2 - 3;" in source
    assert "boltir_data::from_reg<Out>(boltir_data::to_reg(in[((n * 3 + c) * 224 + r) * 224 + col]))" in source
    assert "boltir_data::aligned(out, 16)" in source
    assert [str(v.type) for v in dk.launch_arguments(op).operands] == [
        "tensor<32x3x224x224xf32>", "tensor<32x115x115x16xf16>",
    ]


def test_wide_pixels_and_nchw_results_take_vectors():
    wide = prepared(data_kernel_cases.space_to_depth((2, 8, 8, 16), 2, "f16", "f16", layout="NHWC"))
    assert dk.instance_key(wide).endswith("out=[2,4,4,64] vector=8 index=int")
    nchw = prepared(data_kernel_cases.space_to_depth((2, 3, 9, 7), 2, "f16", "f16", result_layout="NCHW", pads=(1, 0, 0, 1)))
    assert dk.instance_key(nchw).endswith("out=[2,12,5,4] vector=4 index=int")
    assert "y.v[j] = element(in, n, k0, oh, ow0 + j);" in dk.emit_instance(nchw).source


def test_copies_name_bits_and_keys_separate_what_differs():
    f16 = prepared(data_kernel_cases.space_to_depth((2, 3, 8, 8), 2, "f16", "f16"))
    bf16 = prepared(data_kernel_cases.space_to_depth((2, 3, 8, 8), 2, "bf16", "bf16"))
    assert "bits=16" in dk.instance_key(f16) and dk.kernel_name(f16) == dk.kernel_name(bf16)
    assert "using In = uint16_t;" in dk.emit_instance(f16).source
    others = [
        data_kernel_cases.space_to_depth((2, 3, 8, 8), 2, "f16", "f16", pads=(0, 0, 2, 2)),
        data_kernel_cases.space_to_depth((2, 3, 8, 8), 2, "f16", "f16", channels=16),
        data_kernel_cases.space_to_depth((2, 3, 8, 8), 2, "f16", "f32"),
        data_kernel_cases.space_to_depth((2, 3, 8, 8), 2, "f16", "f16", result_layout="NCHW"),
        data_kernel_cases.space_to_depth((2, 3, 8, 8), 4, "f16", "f16"),
    ]
    names = {dk.kernel_name(prepared(case)) for case in others} | {dk.kernel_name(f16)}
    assert len(names) == len(others) + 1


def test_unsupported_element_type_is_one_line():
    """A conversion from a float type the kernels do not compute on (8-bit floats are
    copied only)."""
    case = data_kernel_cases.space_to_depth((1, 1, 2, 2), 2, "f8E4M3FN", "f16")
    with pytest.raises(BoltError, match=r"'op.space_to_depth' has no CUDA kernel: element type f8E4M3FN is not computed on here"):
        prepared(case)


# --------------------------------------------------------------------- with nvcc


@pytest.mark.slow
def test_the_cases_compile_and_the_stem_stores_16_bytes(tmp_path):
    try:
        compiler = nvcc.find_nvcc()
    except BoltError as error:
        pytest.skip(f"needs nvcc: {error.message}")
    cases = [prepared(case) for case in data_kernel_cases.cases() if case.label.startswith("space_to_depth")]
    assert len(cases) >= 5
    source = tmp_path / "space_to_depth.cu"
    source.write_text(dk.emit_translation_unit(cases))
    flags = list(nvcc.CompileJob("data", "", "sm80").flags)
    built = subprocess.run([str(compiler), *flags, "-c", "-o", str(tmp_path / "s2d.o"), str(source)], capture_output=True, text=True, check=False)
    assert built.returncode == 0 and "warning" not in built.stderr, built.stderr[-3000:]
    ptx_flags = [f for f in flags if not f.startswith("-gencode")]
    ptx = subprocess.run([str(compiler), *ptx_flags, "-arch=sm_80", "-ptx", "-o", str(tmp_path / "s2d.ptx"), str(source)],
                         capture_output=True, text=True, check=False)
    assert ptx.returncode == 0, ptx.stderr[-3000:]
    text = (tmp_path / "s2d.ptx").read_text()
    name = dk.kernel_name(prepared(STEM))
    entry = re.search(rf"\.entry (_ZN16boltir_instances\d+{name}6kernelILi8\w*)\(", text)
    assert entry, f"{name}: no kernel<8> in the PTX"
    body = text[entry.end() : text.index("\n}", entry.end())]
    assert body.count("st.global.v4.u32") == 2 and "st.global.u16" not in body
    assert body.count("ld.global.nc.f32") == 12
    assert not re.search(r"\b(div|rem)\.", body)
