"""The nvcc driver: CUDA translation units to object files, in parallel and cached, and
object files to a shared library.

    objects = compile_objects([CompileJob("gemm_0", source, "sm90"), ...])
    link_shared_library(objects, "out/libmodel.so")
    build_shared_library(jobs, "out/libmodel.so")          # both at once

**Toolchain.** nvcc is the first of: `$BOLTIR_NVCC`; `$CUDA_HOME/bin/nvcc`, then
`$CUDA_PATH/bin/nvcc`; `nvcc` on PATH; `/usr/local/cuda*/bin/nvcc`, the newest toolkit
whose version the driver runs (the newest of all where there is no driver). When none
is there, the error lists every place it looked. The CUTLASS headers come from the
`nvidia-cutlass` wheel (`pip install 'boltir[cuda]'`): `cutlass_library/source/{include, tools/util/include,
examples/13_two_tensor_op_fusion, examples/41_fused_multi_head_attention,
examples/88_hopper_fmha}` (the last three for the back-to-back kernels and the fused
attention on sm80 and sm90). The package is
located, never imported: importing it needs dependencies we do not install.

**Flags** (`CompileJob.flags`): `-std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr
-Xcompiler -fPIC`, plus the job's arch's `-gencode` flags from its `boltir.target` record:
- `sm90` (CUTLASS 3.x, wgmma/TMA, and our kernels in a Hopper build):
  `-gencode=arch=compute_90a,code=sm_90a` (plain sm_90 compiles a 3.x kernel's body out and
  fails only at launch), plus the record's `nvcc_defines`, `-DBOLTIR_PDL=1
  -DCUTLASS_ENABLE_GDC_FOR_SM90` (programmatic dependent launch).
- `sm80` (CUTLASS 2.x, mma.sync, and plain CUDA): `-gencode=arch=compute_80,code=[sm_80,sm_90]`:
  one front-end pass, then SASS for the A100 and the H100/H200 (two separate `-gencode`s
  would run the front end twice).
No PTX is embedded, so nothing is JIT-compiled at load time. The link is `nvcc --shared`
with nvcc's default static cudart: the library needs only the driver.

**Cache.** An object is keyed by the SHA-256 of the source, the flags, `nvcc --version`
and CUTLASS's `version.h` (the include paths are left out, so two venvs share entries).
Under `$BOLTIR_CACHE_DIR` (default `$XDG_CACHE_HOME/boltir`, i.e. `~/.cache/boltir`):

    objects/<key>.o          the cache; a hit costs no nvcc call
    members/<key>.json       a unit whose kernels were compiled inside a larger unit
    tmp/<key>-XXXX/          one compile in flight: its source and object
    logs/<kernel>-<key>.log  a failed compile's full output (and .cu, its source)

**Members.** The profiler compiles several kernels to one unit (cheaper per kernel) and
records, for each kernel, the key of the one-kernel unit a model build would compile
(`record_members`). A build that asks for such a unit gets the larger unit's object
instead of compiling it again, unless that would define a kernel twice: each kernel of a
library comes from one object (a larger unit is taken only if none of its kernels, wanted
or not, is already taken from another larger unit, and it then supplies all of them).

nvcc writes into `tmp/`, and the finished object is renamed into `objects/` (atomic on
one file system), so concurrent and interrupted builds never leave a broken object. A
source must be self-contained apart from the CUDA and CUTLASS headers (the emitter's
are): a header it includes from elsewhere is not part of the key.

**Parallelism.** Identical jobs (same source and flags) compile once: problem sizes are
run-time arguments, so many ops share a template instance. At most one nvcc per core
(or `jobs_limit`), and each compile reserves its estimated peak memory (0.8 GB for a 2.x
kernel, 4 GB for a 3.x one; measured 0.6 and 3.4 GB) from what /proc/meminfo says is
available, so a 2-core CI machine runs two 2.x compiles at once and a 16-core one with
20 GB free runs four or five 3.x compiles. The largest compiles start first.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from boltir.backends.cuda.codegen.generator import SHARED_OBJECT_FLAGS, TEMPLATES, CompileJob
from boltir.diagnostics import BoltError

CUTLASS_INCLUDE_DIRS = ("include", "tools/util/include", "examples/13_two_tensor_op_fusion", "examples/41_fused_multi_head_attention",
                        "examples/88_hopper_fmha")
"""Relative to the wheel's `cutlass_library/source`."""
TOOLKIT_STUBS = TEMPLATES / "stubs"
"""Headers a CUDA toolkit may lack, each the toolkit's own where it has one (an include path
after CUTLASS's)."""

MISSING_NVCC = "nvcc not found (looked in {places}): install the CUDA toolkit 13.0, or set CUDA_HOME or BOLTIR_NVCC"
MISSING_CUTLASS = "CUTLASS headers not found: pip install 'boltir[cuda]' (or nvidia-cutlass==4.2.0.0)"
TOOLKIT_GLOB_ROOT = Path("/usr/local")
"""Where the CUDA toolkits' default installs (`cuda`, `cuda-13.0`, ...) lie."""

CACHE_FORMAT = "boltir-nvcc-object-v1"
"""Part of every cache key: bump it when the way objects are built changes."""

STALE_TEMPORARY_SECONDS = 24 * 3600
"""A tmp/ entry this old belongs to a build that was killed: removed at the next build."""


# ------------------------------------------------------------------- the toolchain


def find_nvcc() -> Path:
    """nvcc from the first place that has one (see Toolchain in the module docstring); a
    BoltError that lists the places otherwise."""
    requested = os.environ.get("BOLTIR_NVCC")
    if requested:
        found = shutil.which(requested)
        if found is None:
            raise BoltError(f"BOLTIR_NVCC={requested} is not an executable: point it to nvcc, or unset it to look elsewhere")
        return Path(found)
    places = []
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(variable)
        if home:
            candidate = Path(home).expanduser() / "bin" / "nvcc"
            if _is_executable(candidate):
                return candidate
            places.append(f"{variable}={home} (no bin/nvcc)")
        else:
            places.append(f"{variable} (unset)")
    found = shutil.which("nvcc")
    if found is not None:
        return Path(found)
    places.append("PATH")
    toolkits = installed_toolkits()
    if toolkits:
        return newest_runnable_toolkit(toolkits, driver_cuda_version())
    places.append(f"{TOOLKIT_GLOB_ROOT}/cuda*/bin")
    raise BoltError(MISSING_NVCC.format(places=", ".join(places)))


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def toolkit_version(nvcc: Path) -> tuple[int, ...] | None:
    """The version in a toolkit folder's name (`cuda-12.4` -> (12, 4)); None for `cuda`."""
    match = re.fullmatch(r"cuda-(\d+(?:\.\d+)*)", nvcc.parent.parent.name)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def installed_toolkits() -> list[Path]:
    """Every `/usr/local/cuda*/bin/nvcc` there is."""
    return [nvcc for nvcc in sorted(TOOLKIT_GLOB_ROOT.glob("cuda*/bin/nvcc")) if _is_executable(nvcc)]


def newest_runnable_toolkit(toolkits: Sequence[Path], driver: tuple[int, int] | None) -> Path:
    """The newest versioned toolkit the driver runs (all of them without a driver), else
    an unversioned one (`/usr/local/cuda`, a link to the system's choice), else the newest."""
    versioned = sorted((v, nvcc) for nvcc in toolkits if (v := toolkit_version(nvcc)) is not None)
    runnable = [nvcc for version, nvcc in versioned if driver is None or version[:2] <= driver]
    if runnable:
        return runnable[-1]
    unversioned = [nvcc for nvcc in toolkits if toolkit_version(nvcc) is None]
    return unversioned[0] if unversioned else versioned[-1][1]


def driver_cuda_version() -> tuple[int, int] | None:
    """The newest CUDA version the installed driver runs (libcuda's cuDriverGetVersion),
    None without a driver."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int()
        if driver.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return version.value // 1000, version.value % 1000 // 10


def cutlass_package_dir() -> Path | None:
    """The installed `cutlass_library` package's folder, found without importing it."""
    try:
        spec = importlib.util.find_spec("cutlass_library")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def find_cutlass_include_dirs() -> list[Path]:
    """The CUTLASS include folders of the nvidia-cutlass wheel, checked to be there."""
    package = cutlass_package_dir()
    if package is None:
        raise BoltError(MISSING_CUTLASS)
    source = package / "source"
    dirs = [source / relative for relative in CUTLASS_INCLUDE_DIRS]
    missing = [f"source/{relative}" for relative, d in zip(CUTLASS_INCLUDE_DIRS, dirs) if not d.is_dir()]
    if not missing and not (dirs[0] / "cutlass" / "cutlass.h").is_file():
        missing = ["source/include/cutlass/cutlass.h"]
    if missing:
        raise BoltError(f"{MISSING_CUTLASS} (the cutlass_library package at {package} has no {', '.join(missing)})")
    return dirs


_nvcc_versions: dict[tuple[str, int, int], str] = {}
_nvcc_versions_lock = threading.Lock()


def nvcc_version(nvcc: Path) -> str:
    """`nvcc --version`'s output, asked once per process for each nvcc binary."""
    stat = nvcc.stat()
    memo_key = (str(nvcc), stat.st_mtime_ns, stat.st_size)
    with _nvcc_versions_lock:
        if memo_key not in _nvcc_versions:
            try:
                result = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True, timeout=60, check=False)
            except (OSError, subprocess.SubprocessError) as error:
                raise BoltError(f"{nvcc} --version failed: {error}") from None
            if result.returncode != 0:
                raise BoltError(f"{nvcc} --version failed: {first_error_line(result.stdout + result.stderr, result.returncode)}")
            _nvcc_versions[memo_key] = result.stdout.strip()
        return _nvcc_versions[memo_key]


@dataclass(frozen=True)
class Toolchain:
    """nvcc and the CUTLASS headers, with the fingerprints that go into cache keys."""

    nvcc: Path
    nvcc_version: str
    include_dirs: tuple[Path, ...]
    cutlass_fingerprint: str

    @staticmethod
    def find() -> Toolchain:
        nvcc = find_nvcc()
        include_dirs = (*find_cutlass_include_dirs(), TOOLKIT_STUBS)
        version_header = include_dirs[0] / "cutlass" / "version.h"
        fingerprint = hashlib.sha256(version_header.read_bytes() if version_header.is_file() else b"").hexdigest()
        return Toolchain(nvcc, nvcc_version(nvcc), include_dirs, fingerprint)

    @property
    def include_flags(self) -> list[str]:
        return [f"-I{d}" for d in self.include_dirs]

    def compile_command(self, job: CompileJob, source: Path, output: Path) -> list[str]:
        """nvcc on one job's source written to `source`, the object to `output`."""
        return [str(self.nvcc), *job.flags, *self.include_flags, "-c", str(source), "-o", str(output)]

    def object_key(self, job: CompileJob) -> str:
        """The cache key: what decides the object's bytes, and nothing else."""
        digest = hashlib.sha256()
        for part in (CACHE_FORMAT, self.nvcc_version, self.cutlass_fingerprint, *job.flags, job.source):
            data = part.encode()
            digest.update(len(data).to_bytes(8, "little"))  # length-prefixed: no two splits collide
            digest.update(data)
        return digest.hexdigest()[:32]


# ------------------------------------------------------------------------ the cache


def cache_root() -> Path:
    """`$BOLTIR_CACHE_DIR`, else `$XDG_CACHE_HOME/boltir`, else `~/.cache/boltir`."""
    if os.environ.get("BOLTIR_CACHE_DIR"):
        return Path(os.environ["BOLTIR_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "boltir"


@dataclass(frozen=True)
class ObjectCache:
    root: Path

    @property
    def objects(self) -> Path:
        return self.root / "objects"

    @property
    def temporaries(self) -> Path:
        return self.root / "tmp"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def members(self) -> Path:
        return self.root / "members"

    def container_of(self, key: str) -> tuple[str, list[str]] | None:
        """The (object key, member keys) of the larger unit that holds `key`'s kernels,
        when that object is in the cache."""
        try:
            entry = json.loads((self.members / f"{key}.json").read_text())
            container, members = str(entry["object"]), [str(m) for m in entry["members"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return (container, members) if self.object_path(container).exists() and key in members else None

    def object_path(self, key: str) -> Path:
        return self.objects / f"{key}.o"

    def prepare(self) -> None:
        try:
            for directory in (self.objects, self.temporaries, self.logs, self.members):
                directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise BoltError(f"cannot create the object cache at {self.root}: {error.strerror}; set BOLTIR_CACHE_DIR to a writable folder") from None
        self.remove_stale_temporaries()

    def remove_stale_temporaries(self) -> None:
        deadline = time.time() - STALE_TEMPORARY_SECONDS
        for entry in self.temporaries.iterdir():
            try:
                if entry.stat().st_mtime < deadline:
                    shutil.rmtree(entry, ignore_errors=True)
            except OSError:
                pass  # another build removed it first

    def log_stem(self, job: CompileJob, key: str) -> Path:
        return self.logs / f"{safe_file_name(job.name)}-{key[:12]}"


def safe_file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._")[:80] or "kernel"


def write_atomically(path: Path, data: bytes) -> None:
    """Writes `path` whole or not at all: a temporary file beside it, then a rename."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def publish(temporary: Path, final: Path) -> None:
    """Moves a finished file into place atomically, after its bytes reach the disk."""
    with open(temporary, "rb") as file:
        os.fsync(file.fileno())
    os.replace(temporary, final)


# ------------------------------------------------------------------- parallelism


def cpu_count() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def available_memory_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (page cache counts as free), else the free
    physical pages; None where neither is known."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


class MemoryBudget:
    """Compiles reserve their estimated peak memory; one waits while the others'
    reservations leave too little. The first is never refused: a compile bigger than
    the machine still runs, alone."""

    def __init__(self, capacity_bytes: int | None):
        self.capacity = capacity_bytes
        self.reserved = 0
        self.condition = threading.Condition()

    @contextmanager
    def reserve(self, amount: int) -> Iterator[None]:
        with self.condition:
            if self.capacity is not None:
                self.condition.wait_for(lambda: self.reserved == 0 or self.reserved + amount <= self.capacity)
            self.reserved += amount
        try:
            yield
        finally:
            with self.condition:
                self.reserved -= amount
                self.condition.notify_all()


# ------------------------------------------------------------------ running nvcc


@dataclass
class CompileFailure:
    job: CompileJob
    first_error: str
    log_path: Path | None


@dataclass
class RunningProcesses:
    """The nvcc processes in flight, so that an interrupted build can stop them."""

    processes: set[subprocess.Popen] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    def run(self, command: list[str]) -> tuple[int, str]:
        """Runs a command; its exit status and its stdout and stderr together."""
        with self.lock:
            if self.stopping.is_set():
                return -1, "build stopped"
            try:
                # its own process group, so that stopping it stops cicc and ptxas too
                process = subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, process_group=0
                )
            except OSError as error:
                return 127, f"error: cannot run {command[0]}: {error.strerror}"
            self.processes.add(process)
        try:
            output, _ = process.communicate()
        finally:
            with self.lock:
                self.processes.discard(process)
        return process.returncode, output.decode(errors="replace")

    def stop_all(self) -> None:
        with self.lock:
            self.stopping.set()
            for process in self.processes:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass  # it has just finished


ERROR_LINE = re.compile(
    r"\b(error|fatal)\b\s*(#[\w-]+)?\s*:|undefined reference|multiple definition|cannot find -l|Segmentation fault", re.IGNORECASE
)
"""nvcc's `file(12): error: ...` and `nvcc fatal   : ...`, ptxas's `ptxas error   : ...`,
the host compiler's and the linker's errors."""


def first_error_line(output: str, returncode: int) -> str:
    """The line of nvcc's output that says what went wrong first."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if ERROR_LINE.search(line):
            return line
    if returncode < 0:
        return f"nvcc was killed by signal {-returncode} (out of memory?)"
    return lines[0] if lines else f"nvcc exited with status {returncode} and printed nothing"


def compile_one(job: CompileJob, key: str, toolchain: Toolchain, cache: ObjectCache, running: RunningProcesses) -> CompileFailure | None:
    """Compiles one job into the cache; None on success."""
    final = cache.object_path(key)
    if final.exists():  # another build made it meanwhile
        return None
    build_dir = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=cache.temporaries))
    try:
        source = build_dir / f"{safe_file_name(job.name)}.cu"
        source.write_text(job.source)
        built = build_dir / "object.o"
        command = toolchain.compile_command(job, source, built)
        returncode, output = running.run(command)
        if returncode == 0 and built.is_file():
            publish(built, final)
            return None
        if running.stopping.is_set():
            return None
        return record_failure(job, key, cache, command, source, returncode, output)
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)


def record_failure(job: CompileJob, key: str, cache: ObjectCache, command: list[str], source: Path, returncode: int, output: str) -> CompileFailure:
    """Keeps the source and nvcc's output in logs/, with the source's path in the output
    pointing at the kept copy, and says which line to show."""
    stem = cache.log_stem(job, key)
    kept_source = stem.with_suffix(".cu")
    log_path = stem.with_suffix(".log")
    output = output.replace(str(source), str(kept_source))
    shown_command = " ".join(command).replace(str(source), str(kept_source))
    if returncode == 0:
        output += "\n(nvcc exited with status 0 but wrote no object file)"
    write_atomically(kept_source, job.source.encode())
    header = f"# kernel: {job.name}\n# command: {shown_command}\n# exit status: {returncode}\n\n"
    write_atomically(log_path, (header + output).encode())
    first_error = first_error_line(output, returncode).replace(f"{cache.logs}{os.sep}", "")
    return CompileFailure(job, first_error, log_path)


# ----------------------------------------------------------------------- progress


def show_progress(progress: bool | Literal["always"]) -> bool:
    """Whether to draw a bar: "always", or True with stderr a terminal."""
    if progress == "always":
        return True
    return bool(progress) and sys.stderr.isatty()


STATUS_SECONDS = 10.0
"""How often a build whose stderr is not a terminal says how far it is (a log, CI)."""


class Progress:
    """Kernels done, with the compiled and cached counts: a tqdm bar when shown
    (`show_progress`), else, when `status` is on, one line on stderr every STATUS_SECONDS
    while compiling (a build shorter than that prints nothing); silent when both are off."""

    def __init__(self, total: int, cached: int, enabled: bool, description: str = "nvcc", status: bool = False):
        self.total = total
        self.compiled = 0
        self.cached = cached
        self.description = description
        self.bar = None
        self.started = time.monotonic()
        self.stopped = threading.Event()
        self.ticker = None
        if enabled and total:
            from tqdm import tqdm  # only when shown: it costs an import otherwise

            self.bar = tqdm(total=total, initial=cached, desc=description, unit="kernel", file=sys.stderr, dynamic_ncols=True)
            self.bar.set_postfix_str(self.postfix())
        elif status and total:
            self.ticker = threading.Thread(target=self.tick, name="nvcc-status", daemon=True)
            self.ticker.start()

    def postfix(self) -> str:
        return f"compiled={self.compiled} cached={self.cached}"

    def status_line(self) -> str:
        done = self.compiled + self.cached
        return (f"{self.description}: {done}/{self.total} kernels ({self.compiled} compiled, {self.cached} cached), "
                f"{time.monotonic() - self.started:.0f} s\n")

    def tick(self) -> None:
        while not self.stopped.wait(STATUS_SECONDS):
            sys.stderr.write(self.status_line())
            sys.stderr.flush()

    def one_compiled(self) -> None:
        self.compiled += 1
        if self.bar is not None:
            self.bar.set_postfix_str(self.postfix(), refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        self.stopped.set()
        if self.ticker is not None:
            self.ticker.join()
        if self.bar is not None:
            self.bar.close()


# ---------------------------------------------------------------------------- API


def compile_objects(
    jobs: Sequence[CompileJob],
    *,
    jobs_limit: int | None = None,
    progress: bool | Literal["always"] = True,
) -> list[Path]:
    """Compiles each job to an object file and returns their paths, one per job in
    order (identical jobs share one). Cached objects are reused without running nvcc.
    `jobs_limit` caps the parallel nvcc runs (default: the cores; memory is always
    budgeted). `progress`: True shows a bar when stderr is a terminal (else a status
    line every STATUS_SECONDS), "always" a bar always, False nothing. A failed compile raises one BoltError naming the kernel, nvcc's first
    error line and the full log."""
    if jobs_limit is not None and jobs_limit < 1:
        raise BoltError(f"the number of parallel compiles must be at least 1, not {jobs_limit}")
    paths, failures = _compile(list(jobs), jobs_limit, progress, "nvcc", keep_going=False)
    if failures:
        raise compile_error(failures, ObjectCache(cache_root()))
    return paths


def compile_objects_keep_going(
    jobs: Sequence[CompileJob],
    *,
    jobs_limit: int | None = None,
    progress: bool | Literal["always"] = True,
    description: str = "nvcc",
) -> tuple[list[Path | None], list[CompileFailure]]:
    """`compile_objects` for the profiler and model builds: a failed compile does not stop
    the others. Returns each job's object (None where it failed) and the failures (with
    their logs); `compile_error(failures)` makes them one BoltError."""
    return _compile(list(jobs), jobs_limit, progress, description, keep_going=True)


def _compile(jobs: list[CompileJob], jobs_limit: int | None, progress, description: str,
             keep_going: bool) -> tuple[list[Path | None], list[CompileFailure]]:
    """Compiles the jobs not in the cache (identical ones once, long poles first); returns
    each job's object path (None where it failed) and the failures."""
    if not jobs:
        return [], []
    toolchain = Toolchain.find()
    cache = ObjectCache(cache_root())
    cache.prepare()
    keys = [toolchain.object_key(job) for job in jobs]
    unique: dict[str, CompileJob] = {}
    for key, job in zip(keys, jobs):
        unique.setdefault(key, job)
    supplied = objects_of_larger_units([k for k in unique if not cache.object_path(k).exists()], set(unique), cache)
    to_compile = [(key, job) for key, job in unique.items() if key not in supplied and not cache.object_path(key).exists()]
    to_compile.sort(key=lambda item: -item[1].memory_bytes)  # long poles first
    failures: list[CompileFailure] = []
    if to_compile:
        failures = compile_in_parallel(to_compile, toolchain, cache, jobs_limit,
                                       Progress(len(unique), len(unique) - len(to_compile), show_progress(progress), description,
                                                status=bool(progress)),
                                       keep_going=keep_going)
    return _object_paths(keys, supplied, cache), failures


def _object_paths(keys: list[str], supplied: dict[str, str], cache: ObjectCache) -> list[Path | None]:
    """Each unit's object (a larger unit's where `supplied` says so), None where there is none."""
    paths = [cache.object_path(supplied.get(key, key)) for key in keys]
    return [path if path.exists() else None for path in paths]


def objects_of_larger_units(missing: list[str], wanted: set[str], cache: ObjectCache) -> dict[str, str]:
    """{unit key: the object key that supplies it} for the missing units whose kernels a
    larger unit holds (see Members), so that no kernel comes from two objects."""
    supplied: dict[str, str] = {}
    taken: dict[str, str] = {}  # every kernel of the larger units taken, wanted or not
    for key in missing:
        if key in supplied:
            continue
        found = cache.container_of(key)
        if found is None:
            continue
        container, members = found
        if any(taken.get(m, container) != container for m in members):
            continue  # one of its kernels already comes from another larger unit
        taken.update({m: container for m in members})
        supplied.update({m: container for m in members if m in wanted})
    return supplied


def objects_in_cache(jobs: Sequence[CompileJob]) -> list[Path | None]:
    """Each job's object where the cache holds its code already (its own object, or a
    larger unit's: see Members), else None; no kernel comes from two of them."""
    toolchain = Toolchain.find()
    cache = ObjectCache(cache_root())
    cache.prepare()
    keys = [toolchain.object_key(job) for job in jobs]
    supplied = objects_of_larger_units([k for k in keys if not cache.object_path(k).exists()], set(keys), cache)
    return _object_paths(keys, supplied, cache)


def record_members(container: CompileJob, members: Sequence[CompileJob]) -> None:
    """Records that `container`'s object holds the kernels of each one-kernel unit in
    `members` (see Members); a no-op until that object is in the cache."""
    toolchain = Toolchain.find()
    cache = ObjectCache(cache_root())
    cache.prepare()
    container_key = toolchain.object_key(container)
    if not cache.object_path(container_key).exists():
        return
    member_keys = [toolchain.object_key(job) for job in members]
    entry = json.dumps({"object": container_key, "members": member_keys}).encode()
    for key in member_keys:
        write_atomically(cache.members / f"{key}.json", entry)


def compile_in_parallel(
    to_compile: list[tuple[str, CompileJob]], toolchain: Toolchain, cache: ObjectCache, jobs_limit: int | None, progress: Progress,
    keep_going: bool = False,
) -> list[CompileFailure]:
    """Runs the compiles; after the first failure starts no new one, and lets the running
    ones finish (their objects are good for the next build). `keep_going`: every job runs."""
    budget = MemoryBudget(available_memory_bytes())
    running = RunningProcesses()
    failures: list[CompileFailure] = []

    def task(key: str, job: CompileJob) -> CompileFailure | None:
        with budget.reserve(job.memory_bytes):
            if (failures and not keep_going) or running.stopping.is_set():
                return None
            try:
                return compile_one(job, key, toolchain, cache, running)
            except OSError as error:  # the cache's disk is full or read-only
                return CompileFailure(job, f"cannot write to the object cache: {error.strerror}: {error.filename}", None)

    workers = min(jobs_limit or cpu_count(), len(to_compile))
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nvcc")
    finished_normally = False
    try:
        pending: set[Future] = {executor.submit(task, key, job) for key, job in to_compile}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                if future.cancelled():
                    continue
                failure = future.result()
                if failure is None:
                    if not failures or keep_going:
                        progress.one_compiled()
                    continue
                if keep_going:
                    progress.one_compiled()
                elif not failures:
                    for other in pending:
                        other.cancel()
                failures.append(failure)
        finished_normally = True
    finally:
        if not finished_normally:  # interrupted, or a bug: stop nvcc, keep nothing half-done
            running.stop_all()
        executor.shutdown(wait=True, cancel_futures=True)
        progress.close()
    return failures


def compile_error(failures: list[CompileFailure], cache: ObjectCache | None = None) -> BoltError:
    """One error for failed compiles: the first's kernel, nvcc's first error line and log,
    then the others' names."""
    cache = cache or ObjectCache(cache_root())
    first = failures[0]
    message = f"kernel '{first.job.name}' failed to compile: {first.first_error}"
    if first.log_path is not None:
        message += f" (full log: {first.log_path})"
    if len(failures) > 1:
        others = ", ".join(f"'{failure.job.name}'" for failure in failures[1:])
        message += f"; {others} failed too (logs in {cache.logs})"
    return BoltError(message)


def link_shared_library(objects: Iterable[Path | str], output_path: Path | str, *, extra_flags: Sequence[str] = ()) -> Path:
    """Links object files into a shared library at `output_path` (`nvcc --shared`),
    written whole or not at all; returns its path."""
    objects = [Path(o) for o in objects]
    output_path = Path(output_path)
    if not objects:
        raise BoltError(f"nothing to link into {output_path}: no object files")
    missing = [str(o) for o in objects if not o.is_file()]
    if missing:
        raise BoltError(f"cannot link {output_path}: missing object files {', '.join(missing)}")
    nvcc = find_nvcc()
    try:
        output_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BoltError(f"cannot create {output_path.parent}: {error.strerror}") from None
    # a name nothing else uses, not a file made by mkstemp: the linker keeps its mode (0600)
    temporary = str(output_path.parent / f".{output_path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    command = [str(nvcc), "--shared", *SHARED_OBJECT_FLAGS, *extra_flags, "-o", temporary, *map(str, objects)]
    try:
        try:
            result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
        except OSError as error:
            raise BoltError(f"linking {output_path.name} failed: cannot run {nvcc}: {error.strerror}") from None
        if result.returncode != 0:
            output = result.stdout + result.stderr
            cache = ObjectCache(cache_root())
            cache.prepare()
            output_key = hashlib.sha256(str(output_path.resolve()).encode()).hexdigest()
            log_path = cache.logs / f"link-{safe_file_name(output_path.name)}-{output_key[:12]}.log"
            write_atomically(log_path, f"# command: {' '.join(command)}\n# exit status: {result.returncode}\n\n{output}".encode())
            raise BoltError(f"linking {output_path.name} failed: {first_error_line(output, result.returncode)} (full log: {log_path})")
        publish(Path(temporary), output_path)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return output_path


def build_shared_library(
    sources: Sequence[CompileJob],
    output_path: Path | str,
    *,
    jobs_limit: int | None = None,
    progress: bool | Literal["always"] = True,
) -> Path:
    """`compile_objects(sources)` then `link_shared_library`: the translation units,
    as CompileJobs, become one shared library at `output_path`."""
    objects = compile_objects(sources, jobs_limit=jobs_limit, progress=progress)
    unique_objects = list(dict.fromkeys(objects))  # a duplicated object would define its symbols twice
    return link_shared_library(unique_objects, output_path)
