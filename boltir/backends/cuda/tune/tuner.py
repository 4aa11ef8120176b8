"""The profiler of hardware-native search: measures each op's kernel candidates on the GPU
and records the results in the tuning database.

    tuner = Tuner(TuningDatabase.open(), arch="sm90")
    records = tuner.tune(ops)          # op-level GEMM / conv / b2b ops; only missing keys are measured

**Steps.**

1. *What is missing.* Each op's `tuning_key` (on this GPU, read through the driver) is
   looked up; found keys cost nothing, unless their record was timed the older way
   (`timing` "stream", before graph timing) or never measured the choice the build's
   heuristic makes now (`raced_the_heuristic`: recorded before a rule or a kernel family
   changed it): those are measured again. Identical ops (same key) are tuned once.
2. *Candidates* (`candidates.py`, from the build's configured heuristic, at most
   `max_candidates` an op), each lowered alone (a one-op function whose arguments
   are the op's operands) through `lower-op-to-cutlass`; a candidate the template rules
   refuse is recorded as "refused". A b2b op's unfused candidate is timed as the sum of its
   two halves' best times, the halves being tuned as ops of their own.
3. *Compilation.* Compile cost follows template instances, not problems: the distinct
   instances of all the ops are compiled once, `GROUP_SIZE` to a translation unit (three Hopper kernels
   in one unit compile in about half the time of three units), in parallel through
   the object cache. A unit that fails is retried instance by instance, so one bad
   candidate is recorded as "compile failed" and the rest go on. Each unit's kernels are
   recorded as its members (`nvcc.record_members`), so the model build that follows links
   the winners from these objects instead of compiling them again. A generated profiler
   unit (`profile.cu.j2`) holds one stub per (op, candidate), its problem sizes fixed.
4. *Measurement*, in a worker process (`profile_worker.py`), so that a candidate that
   corrupts the CUDA context or crashes costs only itself: the worker is restarted after
   it, with that candidate recorded as "launch failed". Each candidate first runs once on
   random data and is compared with the op-level interpreter (‖Δ‖/‖ref‖ under 1e-2, 1e-3
   for f32); a wrong one is recorded as "wrong" and not timed. The others are timed with
   CUDA events: `INNER` back-to-back launches (rotating over copies of the operands when
   one set fits in L2) are captured once as a CUDA graph; after a warm-up, each of
   `REPEATS` samples is one replay, and the median counts. Graph replay measures device
   time, which is what a model's graph replay pays: issued one by one from the host,
   small kernels measure the launcher's host work instead (a 3.x launcher builds TMA
   descriptors), and the tuner used to prefer 2.x kernels that are slower on the device
   for that reason. A launcher that cannot be captured is timed from the host, and its
   measurement says so (`timing`).
5. *Recording.* Each op's record is written as soon as its last candidate is measured, so
   an interrupted tuning resumes where it stopped.

A progress bar (tqdm) shows the compiles, then the ops measured, candidates measured and
the best time so far.
"""

from __future__ import annotations

import ctypes
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region

from boltir.backends.cuda.codegen import cutlass_kernels
from boltir.backends.cuda.codegen.cutlass_common import FAMILIES
from boltir.backends.cuda.codegen.generator import CompileJob, render, unit_job
from boltir.backends.cuda.codegen.host_program import launcher_declaration
from boltir.backends.cuda.codegen.tiled_families import generator_computing
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.select.candidates import candidates
from boltir.backends.cuda.select.choice import KERNEL_ATTR, UNFUSE, KernelChoice, unfuse
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.backends.cuda.toolchain.nvcc import (
    compile_objects_keep_going,
    link_shared_library,
    objects_in_cache,
    record_members,
    show_progress,
)
from boltir.backends.cuda.tune.database import (
    Measurement,
    TuningDatabase,
    TuningKey,
    TuningRecord,
    describe_choice,
    fastest_of,
    tuning_key,
)
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.ir import make_context, print_module, verify_module
from boltir.target import get_target

GROUP_SIZE = {"sm90": 3, "sm80": 4}
"""Template instances per translation unit (3.x ones are the expensive ones)."""
REPEATS, INNER, WARMUP = 15, 10, 10
TIMING = "graph"
"""How candidates are timed (see step 4); records timed otherwise are measured again."""
L2_BYTES = 60 * 2**20
MAX_POINTERS = 7
"""Pointers per operand set in the profiler's ABI (the most any family takes: a b2b op's
six, plus one spare); the output is always the last."""
WORKER_RESTARTS = 8
"""A worker that dies this many times in one tuning stops it (the GPU is unwell)."""


def raced_the_heuristic(record: TuningRecord, heuristic_choice: KernelChoice | str) -> bool:
    """Whether `record` measured `heuristic_choice` (the search's first candidate): a record
    from before the heuristic changed (a kernel family added, a rule retuned) never raced
    what the build would run without it, so it cannot say that its choice is faster."""
    return any(m.choice == heuristic_choice for m in record.measurements)


# --------------------------------------------------------------------------- the GPU


def gpu_identity() -> tuple[str, int, str]:
    """(name, multiprocessors, arch) of GPU 0, read through the CUDA driver (libcuda), so
    that it costs no compile and no CUDA runtime. A BoltError when there is no GPU."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        raise BoltError("tuning needs an NVIDIA GPU, and this machine has no CUDA driver (libcuda.so.1); "
                        "build with --no-tune (the tuning database, then the heuristic)") from None
    if driver.cuInit(0) != 0:
        raise BoltError("tuning needs an NVIDIA GPU, and the CUDA driver found none; build with --no-tune")
    device = ctypes.c_int()
    name = ctypes.create_string_buffer(256)
    sms, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    if (driver.cuDeviceGet(ctypes.byref(device), 0) or driver.cuDeviceGetName(name, 256, device)
            or driver.cuDeviceGetAttribute(ctypes.byref(sms), 16, device)
            or driver.cuDeviceGetAttribute(ctypes.byref(major), 75, device)
            or driver.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)):
        raise BoltError("the CUDA driver could not describe GPU 0")
    return name.value.decode(), sms.value, f"sm{major.value}{minor.value}"


class _NoBar:
    def update(self, _=1) -> None: ...
    def set_postfix_str(self, _) -> None: ...
    def close(self) -> None: ...


def _progress_bar(total: int, description: str, progress):
    if not total or not show_progress(progress):
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=description, unit="candidate", file=sys.stderr, dynamic_ncols=True)


# --------------------------------------------------------------------------- one op alone


def single_op_module(op: Operation) -> ModuleOp:
    """A module whose @main takes `op`'s operands as arguments and returns its result: the
    op alone, as the profiler measures it (its kernel attribute dropped)."""
    block = Block(arg_types=[operand.type for operand in op.operands])
    clone = op.clone(value_mapper=dict(zip(op.operands, block.args)))
    clone.attributes.pop(KERNEL_ATTR, None)
    block.add_ops([clone, func.ReturnOp(clone.results[0])])
    function = func.FuncOp("main", ([a.type for a in block.args], [clone.results[0].type]), Region(block))
    return ModuleOp([function])


def generator_of(template: Operation):
    """The kernel module of a lowered candidate: CUTLASS's for a template op, ours for an op
    kept at the op level for one of our tiled families (the same launcher ABIs)."""
    return generator_computing(template) or cutlass_kernels


def lower_alone(module: ModuleOp, choice: KernelChoice) -> tuple[ModuleOp, Operation]:
    """The one-op module lowered with `choice`, and its template op; a BoltError when the
    template rules refuse the choice or the op does not lower to exactly one template op
    on the function's arguments."""
    from xdsl.utils.exceptions import VerifyException

    lowered = module.clone()
    entry = lowered.body.block.first_op
    target = entry.body.block.first_op
    target.attributes[KERNEL_ATTR] = choice.to_attr()
    try:
        LowerOpToCutlassPass().apply(make_context(), lowered)
        verify_module(lowered)
    except (VerifyException, BoltError) as error:
        raise BoltError(str(error).splitlines()[0]) from None
    body = [o for o in entry.body.block.ops if not isinstance(o, func.ReturnOp)]
    if len(body) != 1 or not (type(body[0]) in FAMILIES or generator_of(body[0]) is not cutlass_kernels):
        raise BoltError("lowers to more than one op (" + ", ".join(o.name for o in body) + "): not measurable alone")
    template = body[0]
    if (reason := generator_of(template).unsupported_reason(template)) is not None:
        raise BoltError(reason)
    return lowered, template


def operand_scales(op: Operation) -> list[float]:
    """Random-data scale per operand: weights by sqrt(3 / fan-in), so outputs stay near 1
    whatever K is; activations, biases and residuals uniform in [-1, 1]."""
    scales = [1.0] * len(op.operands)
    if isinstance(op, ops.GemmOp):
        scales[1] = (3.0 / op.problem[2]) ** 0.5
    elif isinstance(op, ops.Conv2dOp):
        scales[1] = (3.0 / math.prod(tensor_shape(op.filter.type)[1:])) ** 0.5
    else:
        scales[1] = (3.0 / math.prod(tensor_shape(op.operands[1].type)[1:])) ** 0.5
        scales[2] = (3.0 / math.prod(tensor_shape(op.operands[2].type)[1:])) ** 0.5
        if isinstance(op, ops.DepthwisePointwiseConv2dOp) and op.expand is not None:
            scales[list(op.operands).index(op.expand)] = (3.0 / tensor_shape(op.input.type)[3]) ** 0.5
    return scales


# --------------------------------------------------------------------------- the plan


@dataclass
class Candidate:
    choice: KernelChoice | str
    template: Operation | None = None
    kernel: str | None = None
    stub: int | None = None
    outcome: Measurement | None = None


@dataclass
class OpJob:
    op: Operation
    key: TuningKey
    module: ModuleOp
    candidates: list[Candidate] = field(default_factory=list)
    halves: tuple[TuningKey, TuningKey] | None = None
    pruned: dict[str, int] = field(default_factory=dict)


class Tuner:
    """Tunes op-level ops into a TuningDatabase (see the module docstring)."""

    def __init__(self, database: TuningDatabase, arch: str = "sm90", cutlass: int = 3, *, progress: bool = True,
                 jobs_limit: int | None = None, work_dir: str | os.PathLike | None = None, gpu: tuple[str, int, str] | None = None,
                 heuristic: HeuristicSelector | None = None, max_candidates: int | None = None):
        self.database, self.arch, self.cutlass = database, arch, cutlass
        self.heuristic = heuristic or HeuristicSelector(cutlass=cutlass)
        """The build's configured heuristic: the search starts from its choice, and a record
        that never raced that choice is measured again."""
        self.max_candidates = max_candidates
        """At most this many candidates an op (the heuristic's first; None: all)."""
        self.progress, self.jobs_limit = progress, jobs_limit
        self.work_dir = Path(work_dir) if work_dir else None
        self._gpu = gpu
        self.report: list[str] = []
        self.worker_command = [sys.executable, "-m", "boltir.backends.cuda.tune.worker"]
        """The measuring process (tests substitute a fake one); the request file is appended."""

    @property
    def gpu(self) -> tuple[str, int, str]:
        if self._gpu is None:
            self._gpu = gpu_identity()
        return self._gpu

    def key(self, op: Operation) -> TuningKey:
        return tuning_key(op, self.arch, self.gpu[0])

    def tune(self, op_list) -> dict[TuningKey, TuningRecord]:
        """Measures every op whose key the database lacks; returns the records of all."""
        records, jobs = self.plan(op_list)
        if jobs:
            self._run(jobs, records)
        return records

    def plan(self, op_list) -> tuple[dict[TuningKey, TuningRecord], list[OpJob]]:
        """What `tune` would do, without a GPU: the records found, and a job (with its
        candidates, lowered) for each op to measure."""
        records: dict[TuningKey, TuningRecord] = {}
        jobs: dict[TuningKey, OpJob] = {}
        for op in op_list:
            self._plan(op, records, jobs)
        return records, list(jobs.values())

    # ----------------------------------------------------------------- planning

    def _plan(self, op: Operation, records: dict, jobs: dict) -> TuningKey:
        key = self.key(op)
        if key in records or key in jobs:
            return key
        found = self.database.lookup(key)
        sms = self.gpu[1] or get_target(self.arch).multiprocessors
        heuristic = dataclasses.replace(self.heuristic, sms=sms, cutlass=self.cutlass, notes=[])
        raced = found is not None and raced_the_heuristic(found, heuristic.select(op, self.arch))
        if found is not None and found.timing in (TIMING, "") and raced:
            records[key] = found
            return key
        if found is not None:
            why = f"its record was timed {found.timing}" if raced else "its record never raced the heuristic's choice"
            self.report.append(f"{op.name} {key.problem.split(' ')[0]}: measured again ({why})")
        found_candidates = candidates(op, self.arch, heuristic=heuristic, at_most=self.max_candidates)
        job = OpJob(op, key, single_op_module(op), pruned=found_candidates.pruned)
        if isinstance(op, ops.B2bGemmOp | ops.B2bConv2dOp) and UNFUSE in found_candidates.choices:
            first, second = unfuse(op)
            job.halves = (self._plan(first, records, jobs), self._plan(second, records, jobs))
        for choice in found_candidates.choices:
            candidate = Candidate(choice)
            if choice != UNFUSE:
                try:
                    _, candidate.template = lower_alone(job.module, choice)
                except BoltError as error:
                    candidate.outcome = Measurement(choice, "refused", detail=error.message)
            job.candidates.append(candidate)
        jobs[key] = job
        return key

    # ----------------------------------------------------------------- running

    def _run(self, jobs: list[OpJob], records: dict) -> None:
        with tempfile.TemporaryDirectory(prefix="boltir-tune-", dir=self.work_dir) as work:
            work = Path(work)
            library = self._build(jobs, work)
            measured = [j for j in jobs if any(c.stub is not None for c in j.candidates)]
            self._measure(measured, library, work, records, jobs)

    @staticmethod
    def compile_units(jobs: list[OpJob]):
        """The translation units of the jobs' distinct template instances: (groups of kernel
        names to compile, `unit(names, prefix)` making a group's CompileJob, {kernel name:
        the cached object that holds it already}). Kernels the cache holds (compiled alone,
        or inside an earlier tuning's unit) are not grouped again, so another set of ops
        reuses what an earlier tuning compiled. Also names each candidate's kernel."""
        instances: dict[str, Operation] = {}
        order: list[str] = []
        for job in jobs:
            for candidate in job.candidates:
                if candidate.template is not None:
                    candidate.kernel = generator_of(candidate.template).kernel_name(candidate.template)
                    if candidate.kernel not in instances:
                        instances[candidate.kernel] = candidate.template
                        order.append(candidate.kernel)

        @functools.cache  # a unit's source is asked for again (compiling, then its members)
        def job_of(names: tuple[str, ...], prefix: str) -> CompileJob:
            generator = generator_of(instances[names[0]])
            return unit_job(f"{prefix}{names[0]}" + (f"_and_{len(names) - 1}" if len(names) > 1 else ""), generator,
                            [instances[n] for n in names], generator.kernel_arch(instances[names[0]]))

        def unit(names: list[str], prefix: str = "tune_") -> CompileJob:
            return job_of(tuple(names), prefix)

        try:
            cached = objects_in_cache([unit([name], prefix="") for name in order]) if order else []
        except BoltError:  # no toolchain: nothing is cached, and compiling will say why
            cached = []
        ready = {name: path for name, path in zip(order, cached) if path is not None}
        order = [name for name in order if name not in ready]
        groups: list[list[str]] = []
        # per arch, and on sm90 per template (a CUTLASS 3.x GEMM and a 3.x conv in one unit make
        # GemmUniversal's specializations ambiguous, and a pointwise conv runs as a 3.x GEMM),
        # in first-use order
        open_group: dict[tuple, list[str]] = {}
        for name in order:
            instance = instances[name]
            generator = generator_of(instance)
            arch = generator.kernel_arch(instance)
            # one generator's kernels per unit (ours are plain CUDA in their own frame: a halo
            # conv and a streaming conv are both op.conv2d, and each unit is emitted by the
            # generator of its first kernel)
            if generator is cutlass_kernels:
                kind = (arch, generator, cutlass_kernels.template_name(instance) if arch == "sm90" else "")
            else:
                kind = (arch, generator, instance.name)
            group = open_group.setdefault(kind, [])
            group.append(name)
            if len(group) == GROUP_SIZE[arch]:
                groups.append(group)
                open_group[kind] = []
        groups.extend(g for g in open_group.values() if g)
        return groups, unit, ready

    def _build(self, jobs: list[OpJob], work: Path) -> Path | None:
        groups, unit, ready = self.compile_units(jobs)
        objects, failures = compile_objects_keep_going([unit(g) for g in groups], jobs_limit=self.jobs_limit,
                                                      progress=self.progress, description="compiling candidates")
        good: dict[str, Path] = dict(ready)
        retry: list[list[str]] = []
        for group, path in zip(groups, objects):
            if path is not None:
                good.update({name: path for name in group})
                if len(group) > 1:  # a model build that picks these kernels links this object
                    record_members(unit(group), [unit([name], prefix="") for name in group])
            elif len(group) > 1:
                retry.extend([name] for name in group)
        failed: dict[str, str] = {f.job.name: f.first_error for f in failures}
        if retry:
            again, failures = compile_objects_keep_going([unit(g) for g in retry], jobs_limit=self.jobs_limit,
                                                        progress=self.progress, description="retrying one by one")
            failed.update({f.job.name: f.first_error for f in failures})
            good.update({g[0]: p for g, p in zip(retry, again) if p is not None})
        stubs = []
        for job in jobs:
            for candidate in job.candidates:
                if candidate.kernel is None:
                    continue
                if candidate.kernel not in good:
                    detail = failed.get(f"tune_{candidate.kernel}", "its translation unit failed to compile")
                    candidate.outcome = Measurement(candidate.choice, "compile failed", detail=detail)
                    continue
                candidate.stub = len(stubs)
                stubs.append(self._stub(job, candidate))
        if not stubs:
            return None
        source = self._profiler_source(stubs)
        (profiler_object,) = compile_objects_keep_going([CompileJob("tune_profiler", source, "sm80")], progress=False)[0]
        if profiler_object is None:
            raise BoltError("the generated profiler failed to compile (a boltir bug); see the object cache's logs")
        return link_shared_library(list(dict.fromkeys([*good.values(), profiler_object])), work / "profiler.so")

    @staticmethod
    def _stub(job: OpJob, candidate: Candidate) -> dict:
        arguments = generator_of(candidate.template).launch_arguments(candidate.template)
        entry = candidate.template.parent_op()
        index = {arg: i for i, arg in enumerate(entry.body.block.args)}
        pointers = []
        for position, value in enumerate(arguments.operands):
            if value is None:
                pointers.append("nullptr")
            elif position == len(arguments.operands) - 1:
                pointers.append("p[kPointers - 1]")  # the output, last of every set
            else:
                pointers.append(f"p[{index[value]}]")
        ints = ", ".join(map(str, arguments.problem))
        return {
            "launcher": arguments.name,
            "pointers": ", ".join(pointers),
            "problem": ints,
            "workspace": f"{arguments.name}_workspace_size({ints})",
            "declarations": [launcher_declaration(arguments.name, len(arguments.operands), len(arguments.problem), True),
                             f"size_t {arguments.name}_workspace_size({', '.join('int' for _ in arguments.problem)})"],
            "operands": len(arguments.operands),
        }

    @staticmethod
    def _profiler_source(stubs: list[dict]) -> str:
        declarations = list(dict.fromkeys(d for stub in stubs for d in stub["declarations"]))
        return render("profile.cu.j2", stubs=stubs, declarations=declarations,
                                                                   max_pointers=MAX_POINTERS)

    def _measure(self, jobs: list[OpJob], library: Path | None, work: Path, records: dict, all_jobs: list[OpJob]) -> None:
        plan = []
        for i, job in enumerate(jobs):
            module_path = work / f"op{i}.mlir"
            module_path.write_text(print_module(job.module))
            plan.append({"op": i, "module": str(module_path), "scales": operand_scales(job.op),
                         "candidates": [{"index": j, "stub": c.stub} for j, c in enumerate(job.candidates) if c.stub is not None]})
        remaining = {i: [c["index"] for c in p["candidates"]] for i, p in enumerate(plan)}
        total = sum(len(v) for v in remaining.values())
        bar = _progress_bar(total, "measuring candidates", self.progress)
        best: dict[int, float] = {}
        restarts = 0
        try:
            while any(remaining.values()):
                request = {"library": str(library), "repeats": REPEATS, "inner": INNER, "warmup": WARMUP, "l2_bytes": L2_BYTES,
                           "max_pointers": MAX_POINTERS, "timing": TIMING,
                           "ops": [{**p, "candidates": [c for c in p["candidates"] if c["index"] in remaining[p["op"]]]}
                                   for p in plan if remaining[p["op"]]]}
                request_path = work / "request.json"
                request_path.write_text(json.dumps(request))
                process = subprocess.Popen([*self.worker_command, str(request_path)],
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                started = None
                for line in process.stdout:
                    if not line.startswith("{"):
                        continue
                    message = json.loads(line)
                    i, j = message["op"], message["candidate"]
                    if "started" in message:
                        started = (i, j)
                        continue
                    started = None
                    job, candidate = jobs[i], jobs[i].candidates[j]
                    candidate.outcome = Measurement(candidate.choice, message["status"], message.get("ms"), message.get("error"),
                                                    message.get("detail", ""), message.get("timing", ""))
                    remaining[i].remove(j)
                    bar.update(1)
                    if message["status"] == "ok":
                        best[i] = min(best.get(i, math.inf), message["ms"])
                        bar.set_postfix_str(f"op {i + 1}/{len(jobs)} best {best[i]:.4f} ms")
                    if not remaining[i]:
                        self._finish(job, records)
                stderr = process.stderr.read()
                code = process.wait()
                if started is not None:
                    i, j = started
                    detail = f"the measuring process died (exit code {code})" + (f": {stderr.strip().splitlines()[-1]}" if stderr.strip() else "")
                    jobs[i].candidates[j].outcome = Measurement(jobs[i].candidates[j].choice, "launch failed", detail=detail)
                    remaining[i].remove(j)
                    bar.update(1)
                    if not remaining[i]:
                        self._finish(jobs[i], records)
                elif code != 0 and any(remaining.values()):
                    tail = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {code}"
                    raise BoltError(f"the measuring process failed before measuring anything: {tail}")
                if code != 0:
                    restarts += 1
                    if restarts > WORKER_RESTARTS:
                        raise BoltError(f"the measuring process died {restarts} times; the GPU looks unwell (last: exit code {code})")
        finally:
            bar.close()
        # ops with nothing to measure (all refused; a b2b op's "unfused" alone), and b2b ops
        # whose "unfused" time needed their halves, in plan order: halves come first
        for job in all_jobs:
            if job.key not in records:
                self._finish(job, records)

    def _finish(self, job: OpJob, records: dict) -> None:
        if job.halves is not None:
            if any(h not in records for h in job.halves):
                return  # finished later, once both halves are
            first, second = (records[h] for h in job.halves)
            for candidate in job.candidates:
                if candidate.choice == UNFUSE:
                    if first.best_ms > 0 and second.best_ms > 0:
                        candidate.outcome = Measurement(UNFUSE, "ok", first.best_ms + second.best_ms,
                                                        detail=f"the halves' best: {first.best_ms:.4f} + {second.best_ms:.4f} ms",
                                                        timing=first.timing if first.timing == second.timing else "stream")
                    else:
                        candidate.outcome = Measurement(UNFUSE, "refused", detail="a half has no working candidate")
        measurements = [c.outcome or Measurement(c.choice, "not measured") for c in job.candidates]
        fastest = fastest_of(measurements, prefer=job.candidates[0].choice)  # the heuristic's, within the margin
        if fastest is not None:
            best, best_ms = fastest.choice, fastest.ms
        else:
            best, best_ms = job.candidates[0].choice, -1.0  # the heuristic's: nothing better is known
        record = TuningRecord(job.key, best, best_ms, measurements)
        self.database.store(record)
        records[job.key] = record
        failed = [m for m in measurements if m.status not in ("ok",)]
        summary = f"{job.op.name} {job.key.problem.split(' ')[0]}: {describe_choice(best)} {best_ms:.4f} ms"
        if failed:
            summary += f" ({len(failed)} of {len(measurements)} candidates " + ", ".join(sorted({m.status for m in failed})) + ")"
        self.report.append(summary)

