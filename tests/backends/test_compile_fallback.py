"""A build never fails for one kernel: an op whose CUTLASS instance nvcc rejects runs on
the plain fallback kernel, with one warning line, a manifest entry and the rest of the
build as before. CPU only: nvcc is a fake that fails for the units it is told to."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import boltir
from boltir.backends.cuda.codegen.host_program import build_program
from boltir.backends.cuda.toolchain import nvcc
from boltir.compiler import full_pipeline, lower_model
from boltir.diagnostics import BoltError
from boltir.tools.boltc import main as boltc_main

ROOT = Path(__file__).resolve().parents[2]

FAKE_NVCC = r"""#!/bin/sh
# A stand-in for nvcc: a compile fails when the unit's name (its source's file name) is in
# $FAKE_NVCC_FAIL, or its source holds $FAKE_NVCC_FAIL_PATTERN; otherwise it writes
# "object of: <source>". A link concatenates its inputs.
out=""; source=""; prev=""; inputs=""
for arg in "$@"; do
  [ "$prev" = "-o" ] && out="$arg"
  case "$arg" in
    --version) echo "Cuda compilation tools, release 13.0, V13.0.0 (fake)"; exit 0 ;;
    *.cu) source="$arg" ;;
    *.o) inputs="$inputs $arg" ;;
  esac
  prev="$arg"
done
if [ -z "$source" ]; then
  cat $inputs > "$out"; exit 0
fi
echo "$(basename "$source" .cu)" >> "$FAKE_NVCC_CALLS"
fail=""
for name in $FAKE_NVCC_FAIL; do
  [ "$(basename "$source" .cu)" = "$name" ] && fail=1
done
[ -n "$FAKE_NVCC_FAIL_PATTERN" ] && grep -q "$FAKE_NVCC_FAIL_PATTERN" "$source" && fail=1
if [ -n "$fail" ]; then
  echo "$source(12): warning #177-D: variable \"unused\" was declared but never referenced" >&2
  echo "$source(40): error: class \"cutlass::gemm::warp::SimtWarpShape<16, 8>\" has no member \"kP\"" >&2
  echo "1 error detected in the compilation of \"$source\"." >&2
  exit 2
fi
printf 'object of: ' > "$out"
cat "$source" >> "$out"
"""

ERROR = 'error: class "cutlass::gemm::warp::SimtWarpShape<16, 8>" has no member "kP"'


class FakeNvcc:
    def __init__(self, directory: Path, monkeypatch):
        self.path = directory / "nvcc"
        self.calls_log = directory / "compiled.txt"
        self.path.write_text(FAKE_NVCC)
        self.path.chmod(self.path.stat().st_mode | stat.S_IEXEC)
        self.calls_log.touch()
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("BOLTIR_NVCC", str(self.path))
        monkeypatch.setenv("FAKE_NVCC_CALLS", str(self.calls_log))
        monkeypatch.setenv("FAKE_NVCC_FAIL", "")
        monkeypatch.setenv("FAKE_NVCC_FAIL_PATTERN", "")

    def fail(self, *units: str, pattern: str = "") -> None:
        self.monkeypatch.setenv("FAKE_NVCC_FAIL", " ".join(units))
        self.monkeypatch.setenv("FAKE_NVCC_FAIL_PATTERN", pattern)

    def compiled(self) -> list[str]:
        """The units compiled (or tried), in order."""
        return self.calls_log.read_text().split()


@pytest.fixture(scope="module")
def small_resnet(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("small_resnet")
    subprocess.run([sys.executable, str(ROOT / "examples/small_resnet/make_model.py"), str(directory)], check=True,
                   capture_output=True)
    return directory / "small_resnet.onnx"


@pytest.fixture(scope="module")
def units(small_resnet) -> dict[str, list[str]]:
    """The small ResNet's kernels for sm80 when everything compiles: the CUTLASS
    instances (one per launch, in order) and the other units."""
    module, _, _ = lower_model(small_resnet, arch="sm80", dtype="f16", tuning_db="/nonexistent/tuning.sqlite")
    program = build_program(module)
    return {
        "cutlass": [step.kernel for step in program.steps if step.generation],
        "other": [unit.name for unit in program.units if unit.name not in {s.kernel for s in program.steps if s.generation}],
    }


@pytest.fixture
def fake_nvcc(tmp_path, monkeypatch) -> FakeNvcc:
    """The fake nvcc, fake CUTLASS headers and an empty object cache (no tuning database)."""
    package = tmp_path / "site-packages" / "cutlass_library"
    for relative in nvcc.CUTLASS_INCLUDE_DIRS:
        (package / "source" / relative).mkdir(parents=True)
    (package / "source" / "include" / "cutlass" / "cutlass.h").parent.mkdir(parents=True)
    (package / "source" / "include" / "cutlass" / "cutlass.h").write_text("// fake\n")
    (package / "source" / "include" / "cutlass" / "version.h").write_text("#define CUTLASS_MAJOR 4\n")
    monkeypatch.setattr(nvcc, "cutlass_package_dir", lambda: package)
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path / "cache"))
    directory = tmp_path / "bin"
    directory.mkdir()
    return FakeNvcc(directory, monkeypatch)


def compile_small_resnet(small_resnet: Path, out: Path, pipeline: str | None = None):
    return boltir.compile(small_resnet, out, arch="sm80", dtype="f16", pipeline=pipeline, progress=False)


FEW_CHANNELS_CUTLASS = full_pipeline(arch="sm80").replace("select-kernels{", "select-kernels{few_channels=cutlass ")
"""The default pipeline with the small ResNet's 16-channel convs on CUTLASS (not our
few-channels conv): the tests of failing CUTLASS instances want several that two launches share."""


@pytest.fixture(scope="module")
def cutlass_units(small_resnet) -> list[str]:
    """The CUTLASS instances (one per launch, in order) of FEW_CHANNELS_CUTLASS's build."""
    module, _, _ = lower_model(small_resnet, arch="sm80", dtype="f16", pipeline=FEW_CHANNELS_CUTLASS)
    return [step.kernel for step in build_program(module).steps if step.generation]


def warnings_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if "did not compile" in line]


def test_everything_compiles_no_fallback(fake_nvcc, small_resnet, units, tmp_path, capsys):
    result = compile_small_resnet(small_resnet, tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["compile_fallbacks"] == 0 and result.compile_fallbacks == []
    assert not any("compile_fallback" in launch for launch in manifest["launches"])
    assert [launch["kernel"] for launch in manifest["launches"] if "cutlass" in launch] == units["cutlass"]
    assert warnings_of(capsys.readouterr().err) == []


def test_a_cutlass_instance_that_does_not_compile_falls_back(fake_nvcc, small_resnet, units, tmp_path, capsys):
    failing = next(kernel for kernel in units["cutlass"] if units["cutlass"].count(kernel) == 1)  # one op's instance
    fake_nvcc.fail(failing)
    result = compile_small_resnet(small_resnet, tmp_path / "out")

    (line,) = warnings_of(capsys.readouterr().err)
    replacement = result.compile_fallbacks[0].replacement
    assert line.startswith("warning: op.conv2d at launch ")
    assert f": CUTLASS instance {failing} did not compile ({failing}-" in line and ERROR in line
    assert line.endswith(f"; using the plain fallback kernel {replacement} (correct, not fast)")
    assert "(12): warning" not in line  # the first error, not the first line

    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["compile_fallbacks"] == 1
    (launch,) = [launch for launch in manifest["launches"] if "compile_fallback" in launch]
    assert launch["op"] == "op.conv2d" and launch["kernel"] == replacement and launch["fallback"]
    assert launch["family"] == "conv2d_fallback"
    assert launch["compile_fallback"]["instance"] == failing and ERROR in launch["compile_fallback"]["error"]
    assert f"launch {manifest['launches'].index(launch)}:" in line
    # every other CUTLASS instance stays
    assert [entry["kernel"] for entry in manifest["launches"] if "cutlass" in entry] == [
        kernel for kernel in units["cutlass"] if kernel != failing]

    (record,) = result.compile_fallbacks
    assert (record.op, record.instance) == ("op.conv2d", failing) and record.log.is_file()
    assert result.fallbacks == ["op.conv2d (conv2d_fallback)"]
    library = (tmp_path / "out" / "libmodel.so").read_text()
    assert f"{replacement}(" in library and failing not in library  # nor its object, nor a call to it
    assert "op.conv2d" in (tmp_path / "out" / "module.mlir").read_text()

    # the second round compiled only what was new: the fallback kernel and the host unit
    compiled = fake_nvcc.compiled()
    assert compiled.count(failing) == 1 and compiled.count(replacement) == 1
    assert sorted(compiled[-2:]) == sorted([replacement, "host"])


def test_ops_sharing_a_failing_instance_each_warn(fake_nvcc, small_resnet, cutlass_units, tmp_path, capsys):
    shared = next(kernel for kernel in cutlass_units if cutlass_units.count(kernel) > 1)
    fake_nvcc.fail(shared)
    result = compile_small_resnet(small_resnet, tmp_path / "out", FEW_CHANNELS_CUTLASS)
    lines = warnings_of(capsys.readouterr().err)
    assert len(lines) == cutlass_units.count(shared) == len(result.compile_fallbacks)
    assert all(f"CUTLASS instance {shared} did not compile" in line for line in lines)
    assert len(set(lines)) == len(lines)  # each names its own launch
    manifest = result.manifest
    assert manifest["compile_fallbacks"] == len(lines)
    assert shared not in [launch["kernel"] for launch in manifest["launches"]]


def test_every_cutlass_instance_failing_still_builds(fake_nvcc, small_resnet, cutlass_units, tmp_path, capsys):
    fake_nvcc.fail(pattern="cutlass/")  # every unit that includes CUTLASS
    result = compile_small_resnet(small_resnet, tmp_path / "out", FEW_CHANNELS_CUTLASS)
    lines = warnings_of(capsys.readouterr().err)
    assert len(lines) == len(cutlass_units) == result.manifest["compile_fallbacks"]
    assert {line.split()[1] for line in lines} == {"op.conv2d"}
    assert result.manifest["cutlass"] == []
    assert sorted(result.fallbacks) == ["op.conv2d (conv2d_fallback)"] * 6
    # the batch-1 classifier runs on our few-rows GEMM, which needs no CUTLASS
    (classifier,) = [launch for launch in result.manifest["launches"] if launch["op"] == "op.gemm"]
    assert classifier["family"] == "skinny_gemm" and not classifier["fallback"]


def test_boltc_prints_the_warning(fake_nvcc, small_resnet, units, tmp_path, capsys):
    # one op's instance (the classifier runs on our few-rows GEMM)
    fake_nvcc.fail(next(kernel for kernel in units["cutlass"] if units["cutlass"].count(kernel) == 1))
    assert boltc_main([str(small_resnet), "-o", str(tmp_path / "out"), "--arch", "sm80"]) == 0
    err = capsys.readouterr().err
    (line,) = warnings_of(err)
    assert line.startswith("warning: op.conv2d at launch ") and "conv2d_fallback" in line
    assert "1 op(s) run on plain fallback kernels" in err
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["compile_fallbacks"] == 1


SMALL_M_CUTLASS = full_pipeline(arch="sm80").replace("select-kernels{", "select-kernels{small_m=cutlass ")
"""The default pipeline with the batch-1 classifier on CUTLASS's GEMM (not our few-rows one)."""


def test_a_cutlass_gemm_that_does_not_compile_falls_back(fake_nvcc, small_resnet, tmp_path, capsys):
    module, _, _ = lower_model(small_resnet, arch="sm80", dtype="f16", pipeline=SMALL_M_CUTLASS)
    classifier = [step.kernel for step in build_program(module).steps if step.generation][-1]
    assert classifier.startswith("boltir_gemm_")
    fake_nvcc.fail(classifier)
    result = boltir.compile(small_resnet, tmp_path / "out", arch="sm80", dtype="f16", pipeline=SMALL_M_CUTLASS,
                            progress=False)
    (line,) = warnings_of(capsys.readouterr().err)
    assert line.startswith("warning: op.gemm at launch ") and "gemm_fallback" in line
    assert result.fallbacks == ["op.gemm (gemm_fallback)"] and result.manifest["compile_fallbacks"] == 1


@pytest.mark.parametrize("which", ["host", "data"])
def test_a_boltir_unit_that_does_not_compile_is_one_error(fake_nvcc, small_resnet, units, tmp_path, which):
    unit = "host" if which == "host" else next(name for name in units["other"] if name != "host")
    fake_nvcc.fail(unit, units["cutlass"][0])
    with pytest.raises(BoltError) as error:
        compile_small_resnet(small_resnet, tmp_path / "out")
    message = error.value.message
    assert "\n" not in message
    assert message.startswith(f"kernel '{unit}' failed to compile: ") and ERROR in message
    assert not (tmp_path / "out" / "libmodel.so").exists()


def test_a_fallback_kernel_that_does_not_compile_is_one_error(fake_nvcc, small_resnet, units, tmp_path):
    fake_nvcc.fail(units["cutlass"][0], pattern="constexpr int R = .*, CG = ")
    with pytest.raises(BoltError) as error:
        compile_small_resnet(small_resnet, tmp_path / "out")
    assert re.match(r"kernel 'boltir_conv2d_fallback_\w+' failed to compile: .*has no member", error.value.message)
    assert "\n" not in error.value.message


def test_without_the_op_level_module_a_failure_is_one_error(fake_nvcc, small_resnet, units, tmp_path):
    """A pipeline that lowers nothing itself (here: the module is lowered already) has
    nothing to fall back to."""
    module, _, _ = lower_model(small_resnet, arch="sm80", dtype="f16")
    fake_nvcc.fail(units["cutlass"][0])
    with pytest.raises(BoltError) as error:
        boltir.compile(module, tmp_path / "out", arch="sm80", pipeline="canonicalize", progress=False)
    assert error.value.message.startswith(f"kernel '{units['cutlass'][0]}' failed to compile: ")


def depthwise_model(path: Path) -> Path:
    """Issue 17's second model in small: a depthwise 3x3 conv over 8 channels, then a ReLU."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.random.default_rng(0).standard_normal((8, 1, 3, 3)).astype(np.float32), "dw.weight")
    nodes = [helper.make_node("Conv", ["x", "dw.weight"], ["y"], group=8, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["y"], ["z"])]
    shape = [1, 8, 48, 192]
    graph = helper.make_graph(nodes, "depthwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, shape)], [weight])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_a_depthwise_instance_that_does_not_compile_falls_back(fake_nvcc, tmp_path, capsys):
    """CUTLASS's depthwise conv (select-kernels{depthwise=cutlass}) on the fallback."""
    model = depthwise_model(tmp_path / "depthwise.onnx")
    pipeline = full_pipeline(arch="sm90").replace("select-kernels{", "select-kernels{depthwise=cutlass ")
    module, _, _ = lower_model(model, arch="sm90", dtype="f16", pipeline=pipeline)
    (instance,) = [step.kernel for step in build_program(module).steps if step.generation]
    fake_nvcc.fail(instance)
    result = boltir.compile(model, tmp_path / "out", arch="sm90", dtype="f16", pipeline=pipeline, progress=False)
    (line,) = warnings_of(capsys.readouterr().err)
    assert line.startswith(f"warning: op.conv2d at launch 1: CUTLASS instance {instance} did not compile (")
    (launch,) = [launch for launch in result.manifest["launches"] if "compile_fallback" in launch]
    assert launch["family"] == "conv2d_fallback" and launch["compile_fallback"]["instance"] == instance
    assert result.manifest["compile_fallbacks"] == 1 and result.manifest["cutlass"] == []
    # the fallback computes the whole epilogue: the ReLU stays fused into it
    assert [launch["op"] for launch in result.manifest["launches"]].count("op.conv2d") == 1
