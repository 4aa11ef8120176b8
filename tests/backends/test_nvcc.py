"""The nvcc driver: fast tests against a fake nvcc (a shell script that records its calls
and writes or fails as the source asks), then slow ones that compile real CUDA and
CUTLASS with the real nvcc into a fresh cache."""

from __future__ import annotations

import ctypes
import os
import re
import stat
import threading
import time
from pathlib import Path

import pytest

from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.toolchain import nvcc
from boltir.backends.cuda.toolchain.nvcc import (
    build_shared_library,
    compile_objects,
    link_shared_library,
)
from boltir.diagnostics import BoltError

# ------------------------------------------------------------------- the fakes

FAKE_NVCC = r"""#!/bin/sh
# A stand-in for nvcc. It appends each call to $FAKE_NVCC_CALLS and obeys markers in the
# source: FAKE_ERROR fails (after writing half an object), FAKE_HANG writes half an
# object and hangs, FAKE_SLEEP sleeps a little. A link concatenates its inputs.
echo "$*" >> "$FAKE_NVCC_CALLS"
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
if [ -z "$source" ]; then            # a link
  if cat $inputs | grep -q FAKE_LINK_ERROR; then
    echo "/usr/bin/ld: kernels.o: undefined reference to 'missing_symbol'" >&2
    echo "collect2: error: ld returned 1 exit status" >&2
    exit 1
  fi
  cat $inputs > "$out"; exit 0
fi
if grep -q FAKE_ERROR "$source"; then
  printf 'half an obj' > "$out"
  echo "$source(2): warning #177-D: variable \"unused\" was declared but never referenced" >&2
  echo "$source(3): error: identifier \"undefined_thing\" is undefined" >&2
  echo "1 error detected in the compilation of \"$source\"." >&2
  exit 2
fi
if grep -q FAKE_HANG "$source"; then
  printf 'half an obj' > "$out"; sleep 30; exit 1
fi
grep -q FAKE_SLEEP "$source" && sleep 0.3
printf 'object of: ' > "$out"
sleep 0.05                            # a reader of a half-written object would see this
cat "$source" >> "$out"
"""


class FakeNvcc:
    def __init__(self, directory: Path):
        self.path = directory / "nvcc"
        self.calls_log = directory / "nvcc-calls.txt"
        self.path.write_text(FAKE_NVCC)
        self.path.chmod(self.path.stat().st_mode | stat.S_IEXEC)
        self.calls_log.touch()

    def calls(self) -> list[str]:
        return self.calls_log.read_text().splitlines()

    def compile_calls(self) -> list[str]:
        return [call for call in self.calls() if " -c " in call]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(directory))
    return directory


@pytest.fixture
def fake_cutlass(tmp_path, monkeypatch) -> Path:
    """A cutlass_library package folder with the include folders, and nothing else."""
    package = tmp_path / "site-packages" / "cutlass_library"
    for relative in nvcc.CUTLASS_INCLUDE_DIRS:
        (package / "source" / relative).mkdir(parents=True)
    (package / "source" / "include" / "cutlass" / "cutlass.h").parent.mkdir(parents=True)
    (package / "source" / "include" / "cutlass" / "cutlass.h").write_text("// fake\n")
    (package / "source" / "include" / "cutlass" / "version.h").write_text("#define CUTLASS_MAJOR 4\n")
    monkeypatch.setattr(nvcc, "cutlass_package_dir", lambda: package)
    return package


@pytest.fixture
def fake_nvcc(tmp_path, monkeypatch, fake_cutlass, cache_dir) -> FakeNvcc:
    directory = tmp_path / "bin"
    directory.mkdir()
    fake = FakeNvcc(directory)
    monkeypatch.setenv("BOLTIR_NVCC", str(fake.path))
    monkeypatch.setenv("FAKE_NVCC_CALLS", str(fake.calls_log))
    return fake


def job(name: str, body: str = "", arch: str = "sm80", flags: tuple[str, ...] = ()) -> CompileJob:
    return CompileJob(name, f"// kernel {name}\n{body}\n", arch, flags)


def cached_objects(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "objects").glob("*"))


# ----------------------------------------------------------- missing toolchain


def test_missing_nvcc_says_how_to_get_one(tmp_path, monkeypatch, fake_cutlass, cache_dir):
    for variable in ("BOLTIR_NVCC", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(nvcc, "TOOLKIT_GLOB_ROOT", tmp_path / "usr-local")
    with pytest.raises(BoltError) as error:
        compile_objects([job("gemm")])
    assert error.value.message == (
        f"nvcc not found (looked in CUDA_HOME (unset), CUDA_PATH (unset), PATH, {tmp_path}/usr-local/cuda*/bin): "
        "install the CUDA toolkit 13.0, or set CUDA_HOME or BOLTIR_NVCC"
    )


def test_boltir_nvcc_pointing_nowhere_is_named(tmp_path, monkeypatch, fake_cutlass, cache_dir):
    monkeypatch.setenv("BOLTIR_NVCC", str(tmp_path / "no" / "nvcc"))
    with pytest.raises(BoltError, match=r"BOLTIR_NVCC=.*no/nvcc is not an executable"):
        compile_objects([job("gemm")])


def test_boltir_nvcc_is_used_before_path(fake_nvcc, monkeypatch, tmp_path):
    decoy = tmp_path / "decoy" / "nvcc"
    decoy.parent.mkdir()
    decoy.write_text("#!/bin/sh\necho 'decoy nvcc ran' >&2\nexit 99\n")
    decoy.chmod(0o755)
    monkeypatch.setenv("PATH", f"{decoy.parent}{os.pathsep}{os.environ['PATH']}")
    assert nvcc.find_nvcc() == fake_nvcc.path
    compile_objects([job("gemm")], progress=False)
    assert len(fake_nvcc.compile_calls()) == 1


def test_missing_cutlass_headers_say_how_to_install_them(fake_nvcc, monkeypatch, tmp_path):
    monkeypatch.setattr(nvcc, "cutlass_package_dir", lambda: None)
    with pytest.raises(BoltError) as error:
        compile_objects([job("gemm")])
    assert error.value.message == "CUTLASS headers not found: pip install 'boltir[cuda]' (or nvidia-cutlass==4.2.0.0)"

    headerless = tmp_path / "headerless" / "cutlass_library"
    headerless.mkdir(parents=True)
    monkeypatch.setattr(nvcc, "cutlass_package_dir", lambda: headerless)
    with pytest.raises(BoltError) as error:
        compile_objects([job("gemm")])
    assert error.value.message == (
        f"CUTLASS headers not found: pip install 'boltir[cuda]' (or nvidia-cutlass==4.2.0.0) (the cutlass_library package at {headerless} has no "
        "source/include, source/tools/util/include, source/examples/13_two_tensor_op_fusion, "
        "source/examples/41_fused_multi_head_attention, source/examples/88_hopper_fmha)"
    )
    assert fake_nvcc.compile_calls() == []


def test_include_dirs_are_the_wheels_five(fake_cutlass):
    source = fake_cutlass / "source"
    assert nvcc.find_cutlass_include_dirs() == [
        source / "include",
        source / "tools" / "util" / "include",
        source / "examples" / "13_two_tensor_op_fusion",
        source / "examples" / "41_fused_multi_head_attention",
        source / "examples" / "88_hopper_fmha",
    ]


# ------------------------------------------------------------------------ flags


def test_flags_per_arch(fake_nvcc):
    compile_objects([job("a2x", arch="sm80"), job("a3x", arch="sm90", flags=("-lineinfo",))], progress=False)
    calls = {("sm_90a" in call): call.split() for call in fake_nvcc.compile_calls()}
    common = ["-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr", "-Xcompiler", "-fPIC"]
    for arguments in calls.values():
        assert all(flag in arguments for flag in common)
        includes = [argument for argument in arguments if argument.startswith("-I")]
        assert len(includes) == 6  # the wheel's five, then the toolkit stubs
        assert includes[-1] == f"-I{nvcc.TOOLKIT_STUBS}"
    assert "-gencode=arch=compute_80,code=[sm_80,sm_90]" in calls[False]
    assert "-gencode=arch=compute_90a,code=sm_90a" in calls[True]
    assert "-lineinfo" in calls[True] and "-lineinfo" not in calls[False]


def test_unknown_arch_is_refused():
    with pytest.raises(BoltError, match="kernel 'k': unknown arch 'sm70'; expected one of sm80, sm90"):
        CompileJob("k", "", "sm70")


# ---------------------------------------------------------------------- failure


def test_failure_names_the_kernel_the_first_error_and_the_log(fake_nvcc, cache_dir):
    with pytest.raises(BoltError) as raised:
        compile_objects([job("good"), job("gemm_bias_relu_3", "FAKE_ERROR")], progress=False)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("error: kernel 'gemm_bias_relu_3' failed to compile: ")
    assert 'error: identifier "undefined_thing" is undefined' in message
    assert "warning" not in message

    log_path = Path(message.split("(full log: ")[1].rstrip(")"))
    assert log_path.parent == cache_dir / "logs"
    log = log_path.read_text()
    assert "# kernel: gemm_bias_relu_3" in log and "warning #177-D" in log and "1 error detected" in log
    # the log points at the kept source, not at the deleted build folder
    kept_source = log_path.with_suffix(".cu")
    assert "FAKE_ERROR" in kept_source.read_text()
    assert f"{kept_source}(3): error" in log
    assert f"{kept_source.name}(3): error" in message
    # the half-written object never reached the cache
    assert all(path.read_text().startswith("object of: ") for path in cached_objects(cache_dir))
    assert list((cache_dir / "tmp").iterdir()) == []


def test_every_failure_is_reported(fake_nvcc):
    with pytest.raises(BoltError, match=r"kernel '(one|two)' failed to compile.*'(one|two)' failed too \(logs in "):
        compile_objects([job("one", "FAKE_ERROR"), job("two", "FAKE_ERROR")], jobs_limit=2, progress=False)


def test_first_error_line():
    output = "a.cu(1): warning #177-D: unused\nptxas fatal   : Unresolved extern function 'f'\nmore\n"
    assert nvcc.first_error_line(output, 255) == "ptxas fatal   : Unresolved extern function 'f'"
    assert nvcc.first_error_line("nvcc fatal   : Unsupported gpu architecture 'compute_99'", 1).startswith("nvcc fatal")
    assert nvcc.first_error_line("some error-prone code\nx.cpp:3:1: error: expected ';'", 1) == "x.cpp:3:1: error: expected ';'"
    link = "/usr/bin/ld: a.o: in function `f':\nb.cpp:(.text+0x10): multiple definition of `f'\ncollect2: error: ld returned 1"
    assert nvcc.first_error_line(link, 1) == "b.cpp:(.text+0x10): multiple definition of `f'"
    assert nvcc.first_error_line("", -9) == "nvcc was killed by signal 9 (out of memory?)"
    assert nvcc.first_error_line("", 3) == "nvcc exited with status 3 and printed nothing"


# ----------------------------------------------------------------- dedupe, cache


def test_identical_jobs_compile_once(fake_nvcc):
    first, same_under_another_name, other_arch, other_source = compile_objects(
        [job("gemm_a", "X"), CompileJob("gemm_b", job("gemm_a", "X").source, "sm80"), job("gemm_a", "X", arch="sm90"), job("gemm_c", "Y")],
        progress=False,
    )
    assert first == same_under_another_name
    assert len({first, other_arch, other_source}) == 3
    assert len(fake_nvcc.compile_calls()) == 3


def test_second_build_hits_the_cache_without_running_nvcc(fake_nvcc, cache_dir):
    jobs = [job("conv_0"), job("gemm_1"), job("gemm_2", arch="sm90")]
    first = compile_objects(jobs, progress=False)
    assert len(fake_nvcc.compile_calls()) == 3
    calls_before = len(fake_nvcc.calls())

    second = compile_objects(jobs, progress=False)
    assert second == first
    assert len(fake_nvcc.calls()) == calls_before  # not even nvcc --version, within a process
    assert all(path.parent == cache_dir / "objects" for path in second)
    assert second[0].read_text() == "object of: " + jobs[0].source

    compile_objects([*jobs, job("new_one")], progress=False)
    assert len(fake_nvcc.compile_calls()) == 4  # only the new kernel


def test_the_key_is_source_flags_and_toolchain_not_the_name(fake_nvcc, fake_cutlass):
    toolchain = nvcc.Toolchain.find()
    key = toolchain.object_key(job("a", "X"))
    assert toolchain.object_key(CompileJob("renamed", job("a", "X").source, "sm80")) == key
    assert toolchain.object_key(job("a", "X", flags=("-lineinfo",))) != key
    assert toolchain.object_key(job("a", "X", arch="sm90")) != key
    assert toolchain.object_key(job("a", "Y")) != key
    newer_nvcc = nvcc.Toolchain(toolchain.nvcc, toolchain.nvcc_version + " update 1", toolchain.include_dirs, toolchain.cutlass_fingerprint)
    assert newer_nvcc.object_key(job("a", "X")) != key
    other_cutlass = nvcc.Toolchain(toolchain.nvcc, toolchain.nvcc_version, toolchain.include_dirs, "0" * 64)
    assert other_cutlass.object_key(job("a", "X")) != key


def test_boltir_cache_dir_overrides_the_default(fake_nvcc, tmp_path, monkeypatch):
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path / "elsewhere"))
    [path] = compile_objects([job("gemm")], progress=False)
    assert path.parent == tmp_path / "elsewhere" / "objects"

    monkeypatch.delenv("BOLTIR_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert nvcc.cache_root() == tmp_path / "home" / ".cache" / "boltir"
    [path] = compile_objects([job("gemm")], progress=False)
    assert path == tmp_path / "home" / ".cache" / "boltir" / "objects" / path.name


def test_unwritable_cache_is_a_bolt_error(fake_nvcc, tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(BoltError, match="cannot create the object cache at .*set BOLTIR_CACHE_DIR"):
        compile_objects([job("gemm")], progress=False)


# ------------------------------------------------------------- atomic writes


def test_nvcc_writes_outside_the_cache_and_the_object_is_renamed_in(fake_nvcc, cache_dir):
    [path] = compile_objects([job("gemm")], progress=False)
    [call] = fake_nvcc.compile_calls()
    written = Path(call.split(" -o ")[1].split()[0])
    assert written.parent.parent == cache_dir / "tmp"
    assert not written.exists() and path.exists()
    assert list((cache_dir / "tmp").iterdir()) == []


def test_a_failed_compile_leaves_nothing_and_the_next_build_compiles(fake_nvcc, cache_dir):
    with pytest.raises(BoltError):
        compile_objects([job("gemm", "FAKE_ERROR")], progress=False)
    assert cached_objects(cache_dir) == []
    [path] = compile_objects([job("gemm", "fixed")], progress=False)
    assert path.read_text().startswith("object of: ")


def test_an_interrupted_build_stops_nvcc_and_leaves_no_broken_object(fake_nvcc, cache_dir, monkeypatch):
    # the first kernel to finish "presses Ctrl-C" while the other's nvcc is half-way
    def interrupt(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(nvcc.Progress, "one_compiled", interrupt)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        compile_objects([job("quick", "FAKE_SLEEP"), job("hangs", "FAKE_HANG")], jobs_limit=2, progress=False)
    assert time.monotonic() - started < 10  # the hanging nvcc was stopped, not waited for
    [only] = cached_objects(cache_dir)
    assert only.read_text() == "object of: " + job("quick", "FAKE_SLEEP").source
    assert list((cache_dir / "tmp").iterdir()) == []


def test_concurrent_builds_of_one_kernel_never_expose_a_partial_object(fake_nvcc, cache_dir):
    jobs = [job(f"gemm_{i}", f"FAKE_SLEEP {i}") for i in range(3)]
    expected = {"object of: " + j.source for j in jobs}
    seen_broken: list[str] = []
    building = True

    def watch():
        while building:
            for path in cached_objects(cache_dir):
                if path.read_text() not in expected:
                    seen_broken.append(path.read_text())

    watcher = threading.Thread(target=watch)
    watcher.start()
    builds = [threading.Thread(target=compile_objects, args=(jobs,), kwargs={"progress": False}) for _ in range(2)]
    for build in builds:
        build.start()
    for build in builds:
        build.join()
    building = False
    watcher.join()
    assert seen_broken == []
    assert {path.read_text() for path in cached_objects(cache_dir)} == expected


def test_stale_temporaries_of_killed_builds_are_removed(fake_nvcc, cache_dir):
    stale = cache_dir / "tmp" / "0123-killed"
    fresh = cache_dir / "tmp" / "4567-running"
    for folder in (stale, fresh):
        folder.mkdir(parents=True)
    day_ago = time.time() - 2 * nvcc.STALE_TEMPORARY_SECONDS
    os.utime(stale, (day_ago, day_ago))
    compile_objects([job("gemm")], progress=False)
    assert not stale.exists() and fresh.exists()


# ------------------------------------------------------------------ parallelism


def test_memory_budget_holds_back_compiles_that_do_not_fit():
    budget = nvcc.MemoryBudget(5_000)
    order: list[str] = []
    release = threading.Event()

    def big(name: str):
        with budget.reserve(4_000):
            order.append(f"start {name}")
            release.wait(5)
            order.append(f"end {name}")

    first = threading.Thread(target=big, args=("a",))
    first.start()
    while not order:
        time.sleep(0.01)
    second = threading.Thread(target=big, args=("b",))
    second.start()
    time.sleep(0.1)
    assert order == ["start a"]  # b waits: 8 000 > 5 000
    with budget.reserve(1_000):  # a small one still fits beside a
        pass
    release.set()
    first.join()
    second.join()
    assert order == ["start a", "end a", "start b", "end b"]

    with nvcc.MemoryBudget(100).reserve(4_000):  # bigger than the machine: runs alone
        pass


def test_compiles_run_in_parallel_up_to_the_limit(fake_nvcc):
    jobs = [job(f"k{i}", "FAKE_SLEEP") for i in range(4)]
    started = time.monotonic()
    compile_objects(jobs, jobs_limit=4, progress=False)
    assert time.monotonic() - started < 4 * 0.3  # 0.3 s each, overlapped
    with pytest.raises(BoltError, match="at least 1"):
        compile_objects(jobs, jobs_limit=0)


def test_machine_facts_are_read():
    assert nvcc.cpu_count() >= 1
    memory = nvcc.available_memory_bytes()
    assert memory is None or memory > 0


# --------------------------------------------------------------------- progress


def test_progress_bar_only_when_asked_or_on_a_terminal(fake_nvcc, capsys):
    compile_objects([job("a"), job("b")], progress=True)  # stderr is not a terminal here
    assert capsys.readouterr().err == ""
    compile_objects([job("a"), job("c")], progress="always")
    err = capsys.readouterr().err
    assert "nvcc" in err and "compiled=1 cached=1" in err and "2/2" in err


def test_a_long_build_without_a_terminal_says_how_far_it_is(fake_nvcc, capsys, monkeypatch):
    monkeypatch.setattr(nvcc, "STATUS_SECONDS", 0.1)
    compile_objects([job("a")], progress=False)
    compile_objects([job("a"), job("slow", "FAKE_SLEEP"), job("slow2", "FAKE_SLEEP")], jobs_limit=1, progress=False)
    assert capsys.readouterr().err == ""  # progress=False: nothing, however long
    compile_objects([job("a"), job("slow3", "FAKE_SLEEP"), job("slow4", "FAKE_SLEEP")], jobs_limit=1, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines, "no status line in 0.6 s of compiling"
    assert all(re.fullmatch(r"nvcc: \d/3 kernels \(\d compiled, 1 cached\), \d+ s", line) for line in lines), lines


# ------------------------------------------------------------------------ link


def test_link_writes_the_library_whole(fake_nvcc, tmp_path):
    objects = compile_objects([job("a"), job("b")], progress=False)
    library = link_shared_library(objects, tmp_path / "out" / "libmodel.so")
    assert library.read_text() == "".join(path.read_text() for path in objects)
    [call] = [c for c in fake_nvcc.calls() if "--shared" in c]
    assert "-Xcompiler -fPIC" in call
    assert [p.name for p in library.parent.iterdir()] == ["libmodel.so"]  # no temporary left


def test_link_failure_names_the_library_and_the_log(fake_nvcc, tmp_path, cache_dir):
    objects = compile_objects([job("a", "FAKE_LINK_ERROR")], progress=False)
    with pytest.raises(BoltError) as raised:
        link_shared_library(objects, tmp_path / "libmodel.so")
    message = raised.value.message
    assert message.startswith("linking libmodel.so failed: /usr/bin/ld: kernels.o: undefined reference to 'missing_symbol'")
    log_path = Path(message.split("(full log: ")[1].rstrip(")"))
    assert "collect2: error" in log_path.read_text()
    assert list(tmp_path.glob("*libmodel.so*")) == []
    with pytest.raises(BoltError, match="no object files"):
        link_shared_library([], tmp_path / "libmodel.so")


def test_build_shared_library_links_each_object_once(fake_nvcc, tmp_path):
    library = build_shared_library([job("a"), job("a"), job("b")], tmp_path / "lib.so", progress=False)
    assert library.read_text() == "object of: " + job("a").source + "object of: " + job("b").source


# --------------------------------------------------- the real nvcc and CUTLASS

TRIVIAL_KERNEL = r"""
__global__ void boltir_test_scale_{arch}(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
extern "C" int boltir_test_trivial_{arch}() { return {value}; }
"""

CUTLASS_GEMM = r"""
#include <cutlass/gemm/device/gemm.h>

using Gemm = cutlass::gemm::device::Gemm<
    cutlass::half_t, cutlass::layout::RowMajor,
    cutlass::half_t, cutlass::layout::ColumnMajor,
    cutlass::half_t, cutlass::layout::RowMajor,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>, cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>>;

// Host-only, so it runs without a GPU: does the instance take an m x n x k problem?
extern "C" int boltir_test_gemm_can_implement(int m, int n, int k) {
  Gemm::Arguments arguments({m, n, k}, {nullptr, k}, {nullptr, k}, {nullptr, n}, {nullptr, n}, {1.0f, 0.0f});
  return static_cast<int>(Gemm::can_implement(arguments));
}

extern "C" int boltir_test_gemm_run(const void* a, const void* b, void* d, int m, int n, int k, void* stream) {
  using T = cutlass::half_t;
  Gemm::Arguments arguments({m, n, k}, {static_cast<const T*>(a), k}, {static_cast<const T*>(b), k},
                            {static_cast<T*>(d), n}, {static_cast<T*>(d), n}, {1.0f, 0.0f});
  Gemm gemm;
  return static_cast<int>(gemm(arguments, nullptr, static_cast<cudaStream_t>(stream)));
}
"""


@pytest.fixture
def real_nvcc(tmp_path, monkeypatch) -> FakeNvcc:
    """The real nvcc behind a wrapper that records its calls, and a fresh cache."""
    try:
        real = nvcc.find_nvcc()
        nvcc.find_cutlass_include_dirs()
    except BoltError as error:
        pytest.skip(f"needs nvcc and the CUTLASS headers: {error.message}")
    directory = tmp_path / "bin"
    directory.mkdir()
    recorder = FakeNvcc(directory)
    recorder.path.write_text(f'#!/bin/sh\necho "$*" >> "$FAKE_NVCC_CALLS"\nexec "{real}" "$@"\n')
    monkeypatch.setenv("BOLTIR_NVCC", str(recorder.path))
    monkeypatch.setenv("FAKE_NVCC_CALLS", str(recorder.calls_log))
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path / "cache"))
    return recorder


@pytest.mark.slow
def test_real_cutlass_gemm_builds_loads_and_is_cached(real_nvcc, tmp_path):
    jobs = [
        CompileJob("cutlass_gemm_f16_sm80", CUTLASS_GEMM, "sm80"),
        CompileJob("trivial_sm80", TRIVIAL_KERNEL.replace("{arch}", "sm80").replace("{value}", "80"), "sm80"),
        CompileJob("trivial_sm90", TRIVIAL_KERNEL.replace("{arch}", "sm90").replace("{value}", "90"), "sm90"),
    ]
    started = time.monotonic()
    library_path = build_shared_library(jobs, tmp_path / "out" / "libkernels.so", progress=False)
    cold = time.monotonic() - started
    assert len(real_nvcc.compile_calls()) == 3

    library = ctypes.CDLL(str(library_path))
    assert library.boltir_test_trivial_sm80() == 80 and library.boltir_test_trivial_sm90() == 90
    can_implement = library.boltir_test_gemm_can_implement
    assert can_implement(4096, 3072, 768) == 0  # cutlass::Status::kSuccess
    assert can_implement(128, 128, 3) == 1  # kErrorMisalignedOperand: k breaks the 8-element alignment

    calls_before = len(real_nvcc.calls())
    started = time.monotonic()
    objects = compile_objects(jobs, progress=False)
    warm = time.monotonic() - started
    assert len(real_nvcc.calls()) == calls_before  # every object from the cache
    assert warm < 1.0 and warm < cold / 10, (cold, warm)
    assert all(path.stat().st_size > 0 for path in objects)
    print(f"cold build {cold:.1f} s, cached {warm * 1000:.0f} ms")


@pytest.mark.slow
def test_real_compile_error_names_the_kernel_and_the_line(real_nvcc):
    broken = CompileJob("broken_kernel", "__global__ void k(float* x) { x[0] = undefined_thing; }\n", "sm80")
    with pytest.raises(BoltError) as raised:
        compile_objects([broken], progress=False)
    message = raised.value.message
    assert message.startswith("kernel 'broken_kernel' failed to compile: broken_kernel-")
    assert 'error: identifier "undefined_thing" is undefined' in message
    assert Path(message.split("(full log: ")[1].rstrip(")")).is_file()


def test_keep_going_compiles_the_rest_and_reports_each_failure(fake_nvcc, cache_dir):
    from boltir.backends.cuda.toolchain.nvcc import compile_objects_keep_going

    objects, failures = compile_objects_keep_going([job("good"), job("bad", "FAKE_ERROR"), job("also_good")], progress=False)
    assert objects[0] is not None and objects[2] is not None and objects[1] is None
    assert [f.job.name for f in failures] == ["bad"]
    assert "identifier \"undefined_thing\" is undefined" in failures[0].first_error


# ------------------------------------------------------- members of larger units


def test_a_unit_compiled_inside_a_larger_one_is_not_compiled_again(fake_nvcc, cache_dir):
    """The profiler compiles kernels a, b together and records them as members; a build
    that wants a's and b's one-kernel units gets that object, with no nvcc call."""
    from boltir.backends.cuda.toolchain.nvcc import record_members

    a, b, c = job("a", "A"), job("b", "B"), job("c", "C")
    (group,) = compile_objects([job("a_and_b", "A B")], progress=False)
    record_members(job("a_and_b", "A B"), [a, b])
    calls = len(fake_nvcc.compile_calls())
    objects = compile_objects([a, c, b], progress=False)
    assert objects[0] == objects[2] == group and objects[1] != group
    assert len(fake_nvcc.compile_calls()) == calls + 1  # only c


def test_no_kernel_comes_from_two_larger_units(fake_nvcc, cache_dir):
    """Two larger units both hold b: the second is not taken, so b is defined once."""
    from boltir.backends.cuda.toolchain.nvcc import record_members

    a, b, c = job("a", "A"), job("b", "B"), job("c", "C")
    first, second = compile_objects([job("a_and_b", "A B"), job("b_and_c", "B C")], progress=False)
    record_members(job("a_and_b", "A B"), [a, b])
    record_members(job("b_and_c", "B C"), [b, c])
    objects = compile_objects([a, b, c], progress=False)
    assert objects[0] == objects[1] == first
    assert objects[2] not in (first, second)  # c is compiled alone


def test_members_of_a_unit_not_in_the_cache_are_not_recorded(fake_nvcc, cache_dir):
    from boltir.backends.cuda.toolchain.nvcc import record_members

    record_members(job("never_built", "X Y"), [job("x", "X")])
    assert not list((cache_dir / "members").glob("*.json"))
    (obj,) = compile_objects([job("x", "X")], progress=False)
    assert obj.is_file() and len(fake_nvcc.compile_calls()) == 1


def test_two_larger_units_sharing_an_unwanted_kernel_are_not_both_taken(fake_nvcc, cache_dir):
    """a and b live in larger units that both hold u: linking both would define u twice,
    even though no one asked for u."""
    from boltir.backends.cuda.toolchain.nvcc import record_members

    a, b, u = job("a", "A"), job("b", "B"), job("u", "U")
    first, second = compile_objects([job("a_and_u", "A U"), job("b_and_u", "B U")], progress=False)
    record_members(job("a_and_u", "A U"), [a, u])
    record_members(job("b_and_u", "B U"), [b, u])
    objects = compile_objects([a, b], progress=False)
    assert objects[0] == first and objects[1] not in (first, second)
