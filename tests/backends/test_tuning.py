"""Hardware-native search without a GPU: candidate generation and pruning, the tuning
database (round trip, two writing processes, damaged and foreign files, export/import),
the heuristic's determinism, the db selector, and the profiler's bookkeeping (a crashed
candidate, a wrong one, resuming an interrupted tuning) with a fake measuring process."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from boltir import BoltError
from boltir.backends.cuda.select.candidates import candidates, generation
from boltir.backends.cuda.select.choice import UNFUSE, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.backends.cuda.tune import tuner as profiler
from boltir.backends.cuda.tune.database import (
    describe_choice,
    FORMAT,
    Measurement,
    TuningDatabase,
    TuningKey,
    TuningRecord,
    choice_from_json,
    choice_to_json,
    tuning_key,
)
from boltir.backends.cuda.tune.tuner import Tuner, lower_alone, single_op_module
from boltir.dialects import op as ops
from boltir.dialects.cutlass import Tile
from boltir.ir import make_context, parse_module, print_module
from tests.support.op_modules import b2b_gemm_text, conv_text, gemm_text

GPU = ("Fake GPU", 132, "sm90")


def op_of(text: str):
    module = parse_module(text, "<test>", ctx=make_context())
    return next(o for o in module.walk() if isinstance(o, ops.GemmOp | ops.Conv2dOp | ops.B2bGemmOp))


def lowered_to_cutlass(text: str, arch: str, cutlass: int = 3, selector: str = "heuristic", tuning_db: str = "",
                       narrow_convs: str = "halo"):
    """An op-level module through select-kernels (with `narrow_convs`), lower-op-to-cutlass and plan-memory."""
    from boltir.compiler import backend_passes
    from boltir.pipelines import available_passes, parse_pipeline_spec, run_passes

    ctx = make_context()
    module = parse_module(text, "<test>", ctx=ctx)
    passes = backend_passes(arch, cutlass, selector, tuning_db)
    passes = [step.replace("select-kernels{", f"select-kernels{{narrow_convs={narrow_convs} ") for step in passes]
    run_passes(module, parse_pipeline_spec(",".join(passes), available_passes()), ctx)
    return module


def units_compiled_by(monkeypatch) -> list[str]:
    """The names of the units nvcc compiles from now on (cache hits and members are not)."""
    from boltir.backends.cuda.toolchain import nvcc

    names: list[str] = []
    original = nvcc.compile_in_parallel

    def recording(to_compile, *args, **kwargs):
        names.extend(job.name for _, job in to_compile)
        return original(to_compile, *args, **kwargs)

    monkeypatch.setattr(nvcc, "compile_in_parallel", recording)
    return names


# --------------------------------------------------------------------------- candidates


@pytest.mark.parametrize("text", [gemm_text(4096, 3072, 768), gemm_text(8192, 8192, 8192), conv_text(32, 56, 56, 64, 64, 3, 3),
                                  conv_text(32, 28, 28, 128, 128, 3, 3)], ids=["gemm-bert", "gemm-8192", "conv-56", "conv-28"])
def test_candidates_span_both_generations_lead_with_the_heuristic_and_all_lower(text):
    # CUTLASS's candidates: the 64-channel conv is our halo conv's by default, whose tiles
    # race before these (test_halo_conv_kernels)
    op = op_of(text)
    found = candidates(op, "sm90", 132, 3, halo_mode=None)
    assert 8 <= len(found.choices) <= 16
    assert found.choices[0] == HeuristicSelector(sms=132, cutlass=3, halo_convs=False).select(op, "sm90")
    assert {generation(c) for c in found.choices} == {"2.x", "3.x"}
    assert found.generated == len(found.choices) + sum(found.pruned.values()) > len(found.choices)
    assert len(set(found.choices)) == len(found.choices)
    module = single_op_module(op)
    for choice in found.choices:
        lower_alone(module, choice)  # every candidate is an instance the template rules accept


def test_candidates_are_deterministic():
    op = op_of(gemm_text(4096, 768, 3072))
    assert candidates(op, "sm90", 132, 3).choices == candidates(op, "sm90", 132, 3).choices


def test_sm80_and_cutlass2_targets_have_no_3x_candidates():
    op = op_of(gemm_text(4096, 3072, 768))
    assert {generation(c) for c in candidates(op, "sm80", 108, 2).choices} == {"2.x"}
    assert {generation(c) for c in candidates(op, "sm90", 132, 2).choices} == {"2.x"}


def test_split_k_only_for_small_grids_with_long_k():
    small = candidates(op_of(gemm_text(32, 4096, 4096)), "sm90", 132, 3).choices
    big = candidates(op_of(gemm_text(8192, 8192, 8192)), "sm90", 132, 3).choices
    assert any(c.split_k > 1 for c in small)
    assert all(c.split_k == 1 for c in big)


def test_small_m_gemms_race_narrow_tiles_and_short_split_k_slices():
    """BERT's batch-1 GEMMs (M = 128): ping-pong tiles fill 24-96 of 132 SMs (the heuristic's
    64x64 for FFN1, 64x32 for FFN2, under half a wave of 64x64), so the candidates race the
    other narrow tile and 128x64 cooperative tiles split into slices of 4 K tiles (split 2 at
    K = 768, split 8 at K = 3072), each a valid instance; a full grid keeps none of the 64x32
    tiles."""

    def hopper(text):
        return [c for c in candidates(op_of(text), "sm90", 132, 3).choices if generation(c) == "3.x"]

    ffn1, ffn2 = hopper(gemm_text(128, 3072, 768)), hopper(gemm_text(128, 768, 3072))
    for found, first in ((ffn1, (64, 64, 64)), (ffn2, (64, 32, 64))):
        assert found[0].tile.threadblock == first and found[0].kernel_schedule == "pingpong"
        for width in (32, 64):
            assert any(c.tile.threadblock == (64, width, 64) and c.kernel_schedule == "pingpong" for c in found)
    assert any(c.tile.threadblock == (128, 64, 64) and c.split_k == 2 for c in ffn1)
    assert any(c.tile.threadblock == (128, 64, 64) and c.split_k == 8 for c in ffn2)
    module = single_op_module(op_of(gemm_text(128, 768, 3072)))
    for choice in ffn2:
        lower_alone(module, choice)
    assert not any(c.tile.threadblock[1] == 32 for c in hopper(gemm_text(4096, 3072, 768)))


def test_stream_k_candidates_for_grids_whose_last_wave_idles():
    """ViT-B/16 b32's output projection (M 6304, N = K = 768): every large tile leaves a
    partial last wave (150 tiles of 128x256 on 132 SMs), so the stream-K scheduler's
    versions are candidates, valid instances, and none of them splits K by hand. A grid of
    whole waves (8192 x 8192: 2048 tiles of 128x256 = 15.5 waves, 97% busy) gets none."""
    op = op_of(gemm_text(6304, 768, 768))
    found = candidates(op, "sm90", 132, 3).choices
    stream_k = [c for c in found if generation(c) == "3.x" and c.kernel_schedule == "streamk"]
    assert stream_k and all(c.split_k == 1 and c.tile.threadblock[0] in (128, 256) for c in stream_k)
    assert describe_choice(stream_k[0]).startswith("3.x ") and "streamk" in describe_choice(stream_k[0])
    module = single_op_module(op)
    for choice in stream_k:
        lower_alone(module, choice)
    # no ping-pong tile whose one warpgroup holds more than 128 f32 accumulators per thread
    assert not any(c.kernel_schedule == "pingpong" and c.tile.threadblock[0] * c.tile.threadblock[1] > 128 * 128
                   for c in found if generation(c) == "3.x")
    whole = candidates(op_of(gemm_text(8192, 8192, 8192)), "sm90", 132, 3).choices
    assert not any(getattr(c, "kernel_schedule", None) == "streamk" for c in whole)


def test_convs_on_small_grids_get_2x_split_k_candidates():
    """ResNet-50's 1x1 512 -> 2048 at batch 1 (49 output pixels, 32 tiles of 64x64): serial
    split-k slices among the 2.x candidates, each a valid instance; none with a residual
    block's epilogue, none at batch 32."""
    op = op_of(conv_text(1, 7, 7, 512, 2048, 1, 1, pad=0))
    small = candidates(op, "sm90", 132, 3).choices
    split = [c for c in small if c.split_k > 1 and generation(c) == "2.x"]
    assert split and all(c.family == "conv2d_fprop" for c in split)
    module = single_op_module(op)
    for choice in split:
        lower_alone(module, choice)
    # (the 3.x split candidates of a 1x1 conv's GEMM: tests/backends/test_pointwise_conv.py)
    residual = op_of(conv_text(1, 7, 7, 512, 2048, 1, 1, pad=0, epilogue="bias, relu, residual = add, then relu"))
    assert all(c.split_k == 1 for c in candidates(residual, "sm90", 132, 3).choices if generation(c) == "2.x")
    assert all(c.split_k == 1 for c in candidates(op_of(conv_text(32, 7, 7, 512, 2048, 1, 1, pad=0)), "sm90", 132, 3).choices)


def test_pruning_rules_drop_wasteful_tiles():
    found = candidates(op_of(gemm_text(25088, 64, 64)), "sm90", 132, 3)
    assert found.pruned.get("edge waste", 0) > 0  # N = 64: 128- and 256-wide tiles are mostly padding
    assert all(c.tile.threadblock[1] <= 128 for c in found.choices)
    from boltir.target import get_target

    for choice in found.choices:
        if choice.arch == "sm80":
            assert choice.tile.shared_memory_bytes(16, 16) <= get_target("sm80").shared_memory_bytes


def test_b2b_candidates_are_the_fused_kernel_and_its_unfused_pair():
    choices = candidates(op_of(b2b_gemm_text(16384, 64, 256, 64)), "sm90", 132, 3).choices
    assert len(choices) == 2 and choices[1] == UNFUSE and choices[0].family == "b2b_gemm"


def test_heuristic_is_deterministic_across_processes(tmp_path):
    path = tmp_path / "g.mlir"
    path.write_text(gemm_text(4096, 3072, 768) + conv_text(32, 56, 56, 64, 64, 3, 3).replace("@main", "@other"))
    outputs = []
    for seed in ("1", "2"):
        result = subprocess.run([sys.executable, "-m", "boltir.tools.bolt_opt", str(path), "-p", "select-kernels{selector=heuristic arch=sm90}"],
                                capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] and "kernel = " in outputs[0]


# --------------------------------------------------------------------------- the database


def record_for(op, gpu="NVIDIA H200", times=None) -> TuningRecord:
    choices = candidates(op, "sm90", 132, 3).choices
    times = times or [0.01 * (i + 2) for i in range(len(choices))]
    measurements = [Measurement(c, "ok", t, 1e-3) for c, t in zip(choices, times)]
    best = min(measurements, key=lambda m: m.ms)
    return TuningRecord(tuning_key(op, "sm90", gpu), best.choice, best.ms, measurements)


def test_choices_round_trip_through_json():
    for choice in candidates(op_of(gemm_text(4096, 3072, 768)), "sm90", 132, 3).choices + [UNFUSE]:
        assert choice_from_json(json.loads(json.dumps(choice_to_json(choice)))) == choice


def test_store_and_lookup(tmp_path):
    op = op_of(gemm_text(4096, 3072, 768))
    record = record_for(op)
    with TuningDatabase.open(tmp_path / "t.sqlite") as database:
        database.store(record)
        found = database.lookup(record.key)
        assert found.best == record.best and found.best_ms == record.best_ms and len(found.measurements) == len(record.measurements)
        assert found.version and found.measured_at
        # no GPU named: any GPU's record of the key
        assert database.lookup(TuningKey("", *record.key.without_gpu())).best == record.best
        assert database.lookup(tuning_key(op, "sm80", "NVIDIA H200")) is None
        assert database.lookup(tuning_key(op_of(gemm_text(4096, 3072, 1024)), "sm90", "NVIDIA H200")) is None


def test_key_separates_epilogues_layouts_and_windows():
    keys = {tuning_key(op_of(text), "sm90", "g") for text in [
        gemm_text(64, 64, 64), gemm_text(64, 64, 64, epilogue="bias"), gemm_text(64, 64, 64, epilogue="bias, residual = add"),
        conv_text(2, 8, 8, 16, 16, 3, 3), conv_text(2, 8, 8, 16, 16, 3, 3, stride=2), conv_text(2, 8, 8, 16, 16, 3, 3, pad=0)]}
    assert len(keys) == 6


WRITER = textwrap.dedent("""
    import sys
    from tests.support.op_modules import gemm_text
    from boltir.backends.cuda.tune.database import TuningDatabase, TuningRecord, Measurement, tuning_key
    from boltir.backends.cuda.select.heuristic import HeuristicSelector
    from boltir.ir import make_context, parse_module
    from boltir.dialects import op as ops
    database = TuningDatabase.open(sys.argv[1])
    for i in range(25):
        m = 64 * (i + 1) + 8 * int(sys.argv[2])
        op = next(o for o in parse_module(gemm_text(m, 256, 256), "<w>", ctx=make_context()).walk() if isinstance(o, ops.GemmOp))
        choice = HeuristicSelector(sms=132).select(op, "sm90")
        database.store(TuningRecord(tuning_key(op, "sm90", "g"), choice, 0.01, [Measurement(choice, "ok", 0.01)]))
""")


def test_two_processes_write_at_once(tmp_path, repo_root):
    path = tmp_path / "shared.sqlite"
    TuningDatabase.open(path).close()
    # `python -c` from the repository root: tests.support is importable there
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(i)], cwd=repo_root, stderr=subprocess.PIPE, text=True)
               for i in (1, 2)]
    for writer in writers:
        assert writer.wait(timeout=120) == 0, writer.stderr.read()
    with TuningDatabase.open(path) as database:
        assert len(database) == 50
        assert database.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_damaged_file_is_refused_with_the_way_out(tmp_path):
    path = tmp_path / "t.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(BoltError, match=r"t.sqlite is damaged or not a database .*pass --fresh-tuning-db to move it aside"):
        TuningDatabase.open(path)
    # the way out: moved aside, a new one in its place
    with TuningDatabase.open(path, fresh=True) as database:
        assert len(database) == 0
    assert (tmp_path / "t.sqlite.old").read_bytes().startswith(b"not a database")


def test_a_foreign_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE people (name TEXT)")
    connection.commit()
    connection.close()
    with pytest.raises(BoltError, match="is an SQLite database, but not a boltir tuning database.*--fresh-tuning-db"):
        TuningDatabase.open(path)


def test_another_format_is_refused(tmp_path):
    path = tmp_path / "t.sqlite"
    TuningDatabase.open(path).close()
    connection = sqlite3.connect(path)
    connection.execute("UPDATE meta SET value = 'boltir-tuning-v0' WHERE name = 'format'")
    connection.commit()
    connection.close()
    with pytest.raises(BoltError, match=f"has format 'boltir-tuning-v0', this boltir reads '{FORMAT}'"):
        TuningDatabase.open(path)


def test_a_corrupt_record_is_an_error_not_a_guess(tmp_path):
    path = tmp_path / "t.sqlite"
    op = op_of(gemm_text(256, 256, 256))
    with TuningDatabase.open(path) as database:
        database.store(record_for(op))
        database.connection.execute("UPDATE records SET best = '{\"family\": 3}'")
        with pytest.raises(BoltError, match="holds a record boltir cannot read"):
            database.lookup(tuning_key(op, "sm90", "NVIDIA H200"))


def test_export_import_and_newer_wins(tmp_path):
    op = op_of(gemm_text(4096, 3072, 768))
    with TuningDatabase.open(tmp_path / "a.sqlite") as source:
        source.store(record_for(op))
        exported = source.export_json()
    with TuningDatabase.open(tmp_path / "b.sqlite") as target:
        assert target.import_json(exported) == (1, 0)
        assert target.lookup(tuning_key(op, "sm90", "NVIDIA H200")) is not None
        newer = record_for(op, times=[0.5] * 16)
        newer.measured_at = "2999-01-01T00:00:00+00:00"
        target.store(newer)
        assert target.import_json(exported) == (0, 1)  # ours is newer: kept
    with pytest.raises(BoltError, match="not a boltir tuning export"):
        TuningDatabase.open(tmp_path / "c.sqlite").import_json('{"format": "something else", "records": []}')


# --------------------------------------------------------------------------- selectors


def test_db_selector_takes_the_fastest_allowed_record(tmp_path):
    from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
    from boltir.passes import statistics

    text = gemm_text(4096, 3072, 768)
    op = op_of(text)
    choices = candidates(op, "sm90", 132, 3).choices
    # the last candidate (a 2.x one) is the fastest, then the first 3.x after the heuristic
    times = [0.05] * len(choices)
    times[-1], times[1] = 0.01, 0.02
    path = tmp_path / "t.sqlite"
    with TuningDatabase.open(path) as database:
        database.store(record_for(op, times=times))
    for cutlass, expected in ((3, choices[-1]), (2, choices[-1])):
        module = parse_module(text, "<t>", ctx=make_context())
        with statistics.collecting() as collected:
            SelectKernelsPass(selector="db", arch="sm90", sms=132, cutlass=cutlass, tuning_db=str(path)).apply(make_context(), module)
        chosen = next(o for o in module.walk() if isinstance(o, ops.GemmOp))
        assert KernelChoice.from_attr(chosen.attributes["kernel"]) == expected
        assert collected.get("select-kernels", "kernels from the tuning database") == 1
    # the fastest 3.x is refused to a cutlass=2 build: the fastest 2.x among the records
    times[-1] = 0.9
    with TuningDatabase.open(path) as database:
        database.store(record_for(op, times=times))
    module = parse_module(text, "<t>", ctx=make_context())
    SelectKernelsPass(selector="db", arch="sm90", sms=132, cutlass=2, tuning_db=str(path)).apply(make_context(), module)
    chosen = KernelChoice.from_attr(next(o for o in module.walk() if isinstance(o, ops.GemmOp)).attributes["kernel"])
    assert chosen.arch == "sm80" and chosen != choices[-1]


def test_db_selector_without_a_record_or_a_database_is_the_heuristic(tmp_path):
    from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
    from boltir.passes import statistics

    text = gemm_text(4096, 3072, 768)
    heuristic = parse_module(text, "<t>", ctx=make_context())
    SelectKernelsPass(selector="heuristic", arch="sm90", sms=132).apply(make_context(), heuristic)
    for path in (tmp_path / "missing.sqlite", tmp_path / "empty.sqlite"):
        if path.name == "empty.sqlite":
            TuningDatabase.open(path).close()
        module = parse_module(text, "<t>", ctx=make_context())
        with statistics.collecting() as collected:
            SelectKernelsPass(selector="db", arch="sm90", sms=132, tuning_db=str(path)).apply(make_context(), module)
        assert print_module(module) == print_module(heuristic)
        assert collected.get("select-kernels", "kernels from the heuristic") == 1


def test_tune_without_a_gpu_says_so(tmp_path, monkeypatch):
    from boltir.tools import bolt_opt

    monkeypatch.setattr(profiler, "gpu_identity", lambda: (_ for _ in ()).throw(
        BoltError("tuning needs an NVIDIA GPU, and this machine has no CUDA driver (libcuda.so.1); build with --no-tune")))
    path = tmp_path / "g.mlir"
    path.write_text(gemm_text(256, 256, 256))
    result = subprocess.run([sys.executable, "-m", "boltir.tools.bolt_opt", str(path), "-p",
                             f'select-kernels{{selector=tune tuning_db="{tmp_path / "t.sqlite"}"}}'],
                            capture_output=True, text=True, env={**os.environ, "LD_LIBRARY_PATH": "", "CUDA_VISIBLE_DEVICES": ""})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "tuning needs an NVIDIA GPU" in result.stderr or "found none" in result.stderr
    assert bolt_opt  # imported: the tool exists


# --------------------------------------------------------------------------- the profiler, faked

FAKE_WORKER = textwrap.dedent("""
    # Stands in for profile_worker: candidate stub s takes 0.01 * (s + 1) ms, except what
    # FAKE_WORKER_MODE says: "crash=S" dies while measuring stub S (the first time only),
    # "wrong=S" reports S wrong. Every request it reads is appended to FAKE_WORKER_LOG.
    import json, os, sys
    request = json.loads(open(sys.argv[1]).read())
    with open(os.environ["FAKE_WORKER_LOG"], "a") as log:
        log.write(json.dumps([[item["op"], [c["stub"] for c in item["candidates"]]] for item in request["ops"]]) + "\\n")
    mode = os.environ.get("FAKE_WORKER_MODE", "")
    marker = os.environ["FAKE_WORKER_LOG"] + ".crashed"
    for item in request["ops"]:
        for candidate in item["candidates"]:
            stub = candidate["stub"]
            print(json.dumps({"op": item["op"], "candidate": candidate["index"], "started": True}), flush=True)
            if mode == f"crash={stub}" and not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(9)
            if mode == f"wrong={stub}":
                print(json.dumps({"op": item["op"], "candidate": candidate["index"], "status": "wrong", "error": 0.5}), flush=True)
                continue
            print(json.dumps({"op": item["op"], "candidate": candidate["index"], "status": "ok", "ms": 0.01 * (stub + 1),
                              "error": 1e-3, "timing": request["timing"]}), flush=True)
""")


@pytest.fixture
def fake_tuner(tmp_path, monkeypatch):
    worker = tmp_path / "worker.py"
    worker.write_text(FAKE_WORKER)
    log = tmp_path / "worker.log"
    monkeypatch.setenv("FAKE_WORKER_LOG", str(log))

    def fake_build(self, jobs, work):  # every candidate "compiles"; stubs numbered in order
        stub = 0
        for job in jobs:
            for candidate in job.candidates:
                if candidate.template is not None:
                    candidate.stub, stub = stub, stub + 1
        return work / "profiler.so"

    monkeypatch.setattr(Tuner, "_build", fake_build)

    def make(database):
        tuner = Tuner(database, "sm90", 3, progress=False, gpu=GPU)
        tuner.worker_command = [sys.executable, str(worker)]
        return tuner

    make.requests = lambda: [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return make


def gemm_ops():
    return [op_of(gemm_text(4096, 3072, 768)), op_of(gemm_text(4096, 768, 3072)), op_of(gemm_text(1024, 1024, 1024))]


def test_tuning_records_the_fastest_and_skips_known_ops(tmp_path, fake_tuner):
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    items = gemm_ops()
    records = fake_tuner(database).tune(items + [items[0]])  # a repeated op is tuned once
    assert len(records) == 3 and len(database) == 3
    for record in records.values():
        assert record.best == record.measurements[0].choice  # stub order = candidate order: the first is fastest
        assert all(m.status == "ok" for m in record.measurements)
    assert len(fake_tuner.requests()) == 1
    fake_tuner(database).tune(items)  # warm: nothing measured again
    assert len(fake_tuner.requests()) == 1


def test_records_timed_from_the_host_are_measured_again_with_graphs(tmp_path, fake_tuner):
    """Records from before graph timing (no `timing`: read as "stream") are stale: --tune
    measures them again and replaces them; graph-timed ones are kept."""
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    items = gemm_ops()
    records = fake_tuner(database).tune(items)
    assert {r.timing for r in records.values()} == {"graph"}
    old = json.loads(database.export_json())
    for record in old["records"][:2]:
        for measurement in record["measurements"]:
            measurement.pop("timing", None)
    other = TuningDatabase.open(tmp_path / "old.sqlite")
    other.import_json(json.dumps(old))
    assert sorted(r.timing for r in other.records()) == ["graph", "stream", "stream"]
    tuner = fake_tuner(other)
    tuner.tune(items)
    assert len(fake_tuner.requests()[-1]) == 2  # only the two stream-timed ops
    assert sum("measured again (its record was timed stream)" in line for line in tuner.report) == 2
    assert {r.timing for r in other.records()} == {"graph"}


def test_a_record_that_never_raced_the_heuristics_choice_is_measured_again(tmp_path, fake_tuner):
    """A record from before the heuristic changed (here: one that measured every candidate
    but the heuristic's) cannot say its choice is faster: the tuner measures the op again,
    and the db selector keeps the heuristic's choice meanwhile."""
    from boltir.backends.cuda.tune.selectors import DatabaseSelector

    op = op_of(gemm_text(4096, 3072, 768))
    stale = record_for(op, gpu=GPU[0])
    stale.measurements = stale.measurements[1:]
    stale.best, stale.best_ms = stale.measurements[-1].choice, 0.001
    for measurement in stale.measurements:
        measurement.timing = "graph"
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    database.store(stale)
    selector = DatabaseSelector(sms=132, tuning_db=str(tmp_path / "t.sqlite"), gpu=GPU[0])
    assert selector.select(op, "sm90") == HeuristicSelector(sms=132).select(op, "sm90")
    assert selector.counts == {"kernels from the heuristic": 1, "records that never raced the heuristic's choice": 1}
    assert any("never raced the heuristic's gemm choice" in note for note in selector.notes)
    tuner = fake_tuner(database)
    records = tuner.tune([op])
    assert len(fake_tuner.requests()) == 1
    assert any("never raced the heuristic's choice" in line for line in tuner.report)
    assert profiler.raced_the_heuristic(records[tuner.key(op)], HeuristicSelector(sms=132).select(op, "sm90"))
    fake_tuner(database).tune([op])  # raced now: kept
    assert len(fake_tuner.requests()) == 1


def test_the_search_starts_from_the_builds_configured_heuristic():
    """select-kernels' options reach the candidates: the first is the configured
    heuristic's choice, whichever family that is."""
    for text, options in ((conv_text(32, 56, 56, 64, 64, 3, 3), {"halo_convs": False}),
                          (conv_text(32, 56, 56, 64, 64, 3, 3), {"halo_convs": False, "conv_ctas": 2}),
                          (conv_text(1, 56, 56, 144, 144, 3, 3, depthwise=True), {"direct_depthwise": False}),
                          (gemm_text(1, 1000, 2048), {"skinny_gemms": False})):
        op = op_of(text)
        configured = HeuristicSelector(sms=132, **options)
        found = candidates(op, "sm90", heuristic=configured)
        assert found.choices[0] == configured.select(op, "sm90") != HeuristicSelector(sms=132).select(op, "sm90")


def test_a_bounded_search_keeps_the_heuristics_choice_first_and_races_every_kind():
    """ResNet-50's 3×3 64-channel conv: our halo conv's tiles, then CUTLASS's 3.x and 2.x."""
    op = op_of(conv_text(32, 56, 56, 64, 64, 3, 3))
    every = candidates(op, "sm90", 132)
    bounded = candidates(op, "sm90", 132, at_most=4)
    kinds = [(c.family, c.arch) for c in bounded.choices]
    assert bounded.choices[0] == every.choices[0] == HeuristicSelector(sms=132).select(op, "sm90")
    assert kinds[:3] == [("halo_conv", "sm90"), ("conv2d_fprop", "sm90"), ("conv2d_fprop", "sm80")]
    assert set(bounded.choices) <= set(every.choices) and len(bounded.choices) == 4
    assert bounded.pruned["beyond the search's limit"] == len(every.choices) - 4
    assert bounded.generated == every.generated


def test_3x_gemms_and_convs_never_share_a_translation_unit(tmp_path):
    """nvcc rejects a unit with a 3.x GEMM and a 3.x conv ("more than one partial
    specialization matches ... GemmUniversal"); 2.x kernels of both kinds may share one."""
    from boltir.backends.cuda.codegen.cutlass_kernels import kernel_arch

    tuner = Tuner(TuningDatabase.open(tmp_path / "t.sqlite"), "sm90", 3, progress=False, gpu=GPU,
                  heuristic=HeuristicSelector(halo_convs=False))
    _, jobs = tuner.plan([op_of(gemm_text(1024, 1024, 1024)), op_of(conv_text(32, 56, 56, 64, 64, 3, 3))])
    groups, _, _ = tuner.compile_units(jobs)  # names each candidate's kernel
    templates = {c.kernel: c.template for job in jobs for c in job.candidates if c.template is not None}
    kinds = [{(kernel_arch(templates[n]), templates[n].name) for n in group} for group in groups]
    assert all(len({kind for arch, kind in k if arch == "sm90"}) <= 1 for k in kinds)
    assert all(len({arch for arch, _ in k}) == 1 for k in kinds)
    assert any(len({kind for _, kind in k}) == 2 for k in kinds)  # the 2.x ones do share


def test_a_pointwise_conv_as_a_3x_gemm_never_shares_a_unit_with_a_3x_conv(tmp_path):
    """Both are cutlass.conv2d_fprop ops, but one is a GemmUniversal and the other a
    ConvUniversal: in one unit nvcc finds GemmUniversal's specializations ambiguous (as in
    MobileNetV2 b32's tuning). Units group sm90 instances by their template."""
    from boltir.backends.cuda.codegen.cutlass_kernels import kernel_arch, template_name
    from boltir.backends.cuda.tune.tuner import generator_of

    tuner = Tuner(TuningDatabase.open(tmp_path / "t.sqlite"), "sm90", 3, progress=False, gpu=GPU,
                  heuristic=HeuristicSelector(halo_convs=False))
    _, jobs = tuner.plan([op_of(conv_text(32, 14, 14, 96, 576, 1, 1)), op_of(conv_text(32, 14, 14, 96, 96, 3, 3))])
    groups, _, _ = tuner.compile_units(jobs)
    templates = {c.kernel: c.template for job in jobs for c in job.candidates if c.template is not None}
    hopper = {n: template_name(t) for n, t in templates.items()
              if generator_of(t).__name__.endswith("cutlass_kernels") and kernel_arch(t) == "sm90"}
    assert {"conv2d_fprop_pointwise_sm90", "conv2d_fprop_sm90"} <= set(hopper.values())
    assert all(len({hopper[n] for n in group if n in hopper}) <= 1 for group in groups)


def test_our_kernel_families_never_share_a_translation_unit(tmp_path):
    """A unit is emitted by its first kernel's generator: the halo conv's, the streaming
    conv's and the depthwise conv's candidates are all op.conv2d, and one unit of two of
    them raised "no stream_conv kernel for op.conv2d" (MobileNetV2 b32's tuning)."""
    from boltir.backends.cuda.tune.tuner import generator_of

    tuner = Tuner(TuningDatabase.open(tmp_path / "t.sqlite"), "sm90", 3, progress=False, gpu=GPU)
    _, jobs = tuner.plan([op_of(conv_text(32, 56, 56, 24, 144, 1, 1)), op_of(conv_text(32, 56, 56, 64, 64, 3, 3)),
                          op_of(conv_text(32, 56, 56, 144, 144, 3, 3, depthwise=True))])
    groups, unit, _ = tuner.compile_units(jobs)
    templates = {c.kernel: c.template for job in jobs for c in job.candidates if c.template is not None}
    families = {generator_of(templates[n]).__name__.rsplit(".", 1)[-1] for n in templates}
    assert {"stream_conv_kernels", "halo_conv_kernels", "depthwise_kernels"} <= families
    assert all(len({generator_of(templates[n]) for n in group}) == 1 for group in groups)
    assert all(unit(group).source for group in groups)  # each unit's generator emits every kernel in it


def test_the_generated_profiler_compiles(tmp_path):
    """The profiler unit (`profile.cu.j2`: stream and graph timing) compiles with the real
    nvcc; its launchers are only declared there, so this needs no CUTLASS and no GPU."""
    import shutil

    nvcc = os.environ.get("BOLTIR_NVCC") or shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH (set BOLTIR_NVCC)")
    tuner = Tuner(TuningDatabase.open(tmp_path / "t.sqlite"), "sm90", 3, progress=False, gpu=GPU)
    records, jobs = {}, {}
    for op in gemm_ops()[:2]:
        tuner._plan(op, records, jobs)
    stubs = [Tuner._stub(job, c) for job in jobs.values() for c in job.candidates[:2] if c.template is not None]
    source = tmp_path / "profile.cu"
    source.write_text(Tuner._profiler_source(stubs))
    assert "cudaStreamBeginCapture" in source.read_text() and len(stubs) == 4
    result = subprocess.run([nvcc, "-std=c++17", "-c", str(source), "-o", str(tmp_path / "profile.o")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]


@pytest.mark.parametrize("text", [gemm_text(4096, 3072, 768), conv_text(32, 56, 56, 64, 64, 3, 3)])
def test_a_tuned_kernel_is_the_unit_a_model_build_compiles(tmp_path, text):
    """The profiler records each kernel as a member of its larger unit by the one-kernel
    unit a model build would compile: the same source and arch, so the build finds it."""
    from boltir.backends.cuda.codegen.cutlass_kernels import (
        emit_translation_unit,
        kernel_arch,
        kernel_name,
    )
    from boltir.backends.cuda.codegen.host_program import build_program

    module = lowered_to_cutlass(text, "sm90", narrow_convs="cutlass")  # CUTLASS's conv, not the halo conv
    built = {(job.source, job.arch) for job in build_program(module).units if job.name != "host"}
    tuner = Tuner(TuningDatabase.open(tmp_path / "t.sqlite"), "sm90", 3, progress=False, gpu=GPU,
                  heuristic=HeuristicSelector(halo_convs=False))
    records, jobs = {}, {}
    tuner._plan(op_of(text), records, jobs)
    (job,) = jobs.values()
    heuristic = job.candidates[0].template  # the heuristic's choice leads the candidates
    assert (emit_translation_unit([heuristic]), kernel_arch(heuristic)) in built, kernel_name(heuristic)


def test_a_crashing_candidate_is_recorded_and_the_rest_go_on(tmp_path, fake_tuner, monkeypatch):
    monkeypatch.setenv("FAKE_WORKER_MODE", "crash=2")
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    records = fake_tuner(database).tune(gemm_ops()[:1])
    (record,) = records.values()
    statuses = [m.status for m in record.measurements]
    assert statuses[2] == "launch failed" and statuses.count("ok") == len(statuses) - 1
    assert "died (exit code 9)" in record.measurements[2].detail
    assert len(fake_tuner.requests()) == 2  # restarted once, for what was left


def test_a_wrong_candidate_never_wins(tmp_path, fake_tuner, monkeypatch):
    monkeypatch.setenv("FAKE_WORKER_MODE", "wrong=0")
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    (record,) = fake_tuner(database).tune(gemm_ops()[:1]).values()
    assert record.measurements[0].status == "wrong"
    assert record.best == record.measurements[1].choice


def test_an_interrupted_tuning_resumes_where_it_stopped(tmp_path, fake_tuner, monkeypatch):
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    stores = []
    original = TuningDatabase.store

    def interrupt_after_the_first(self, record):
        original(self, record)
        stores.append(record)
        if len(stores) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(TuningDatabase, "store", interrupt_after_the_first)
    with pytest.raises(KeyboardInterrupt):
        fake_tuner(database).tune(gemm_ops())
    monkeypatch.setattr(TuningDatabase, "store", original)
    assert len(database) == 1
    fake_tuner(database).tune(gemm_ops())
    assert len(database) == 3
    # the resumed run measured only the two missing ops
    assert len(fake_tuner.requests()[-1]) == 2


def test_b2b_unfused_time_is_the_sum_of_its_halves(tmp_path, fake_tuner):
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    op = op_of(b2b_gemm_text(16384, 64, 256, 64))
    records = fake_tuner(database).tune([op])
    assert len(records) == 3  # the b2b op and its two halves
    record = records[tuning_key(op, "sm90", GPU[0])]
    unfused = next(m for m in record.measurements if m.choice == UNFUSE)
    halves = [r for k, r in records.items() if k.op_kind == "op.gemm"]
    assert unfused.status == "ok" and unfused.ms == pytest.approx(sum(h.best_ms for h in halves))
    assert record.best == min((m for m in record.measurements if m.status == "ok"), key=lambda m: m.ms).choice


# --------------------------------------------------------------------------- bolt-tune


def test_bolt_tune_show_export_import(tmp_path, capsys):
    from boltir.tools import bolt_tune

    path = tmp_path / "t.sqlite"
    with TuningDatabase.open(path) as database:
        database.store(record_for(op_of(gemm_text(4096, 3072, 768))))
    assert bolt_tune.main(["db", "show", "--tuning-db", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "NVIDIA H200" in shown and "4096x768,3072x768,3072,4096x3072" in shown and "1 records in" in shown
    assert bolt_tune.main(["db", "show", "--all", "--tuning-db", str(path)]) == 0
    assert capsys.readouterr().out.count(" ok ") >= 8
    exported = tmp_path / "e.json"
    assert bolt_tune.main(["db", "export", "--tuning-db", str(path), "-o", str(exported)]) == 0
    assert bolt_tune.main(["db", "import", str(exported), "--tuning-db", str(tmp_path / "new.sqlite")]) == 0
    assert "imported 1 record(s)" in capsys.readouterr().err


def test_bolt_tune_errors_are_one_line(tmp_path, capsys):
    from boltir.tools import bolt_tune

    (tmp_path / "bad.sqlite").write_text("garbage")
    assert bolt_tune.main(["db", "show", "--tuning-db", str(tmp_path / "bad.sqlite")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1 and "--fresh-tuning-db" in err
    assert bolt_tune.main(["db", "show", "--tuning-db", str(tmp_path / "none.sqlite")]) == 1
    assert capsys.readouterr().err.strip() == f"error: no tuning database at {tmp_path / 'none.sqlite'}"
    assert bolt_tune.main(["db", "import", str(tmp_path / "missing.json"), "--tuning-db", str(tmp_path / "x.sqlite")]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert bolt_tune.main(["db", "show", "--fresh-tuning-db", "--tuning-db", str(tmp_path / "bad.sqlite")]) == 0
    assert "no records" in capsys.readouterr().out


def small_resnet(tmp_path, repo_root) -> Path:
    subprocess.run([sys.executable, str(repo_root / "examples" / "small_resnet" / "make_model.py"), str(tmp_path)], check=True,
                   capture_output=True)
    return next(tmp_path.glob("*.onnx"))


def test_boltc_tune_without_a_gpu_is_one_clear_line(tmp_path, capsys, monkeypatch, repo_root):
    from boltir.tools import boltc

    monkeypatch.setattr(profiler, "gpu_identity", lambda: (_ for _ in ()).throw(
        BoltError("tuning needs an NVIDIA GPU, and the CUDA driver found none; build with --no-tune")))
    model = small_resnet(tmp_path, repo_root)
    assert boltc.main([str(model), "--emit", "cutlass", "--tune", "--tuning-db", str(tmp_path / "t.sqlite")]) == 1
    assert capsys.readouterr().err.strip() == "error: tuning needs an NVIDIA GPU, and the CUDA driver found none; build with --no-tune"


def test_boltc_no_tune_reads_the_database_and_says_untuned(tmp_path, capsys, repo_root):
    from boltir.tools import boltc

    model = small_resnet(tmp_path, repo_root)
    assert boltc.main([str(model), "--emit", "cutlass", "--no-tune", "--pass-stats", "--tuning-db", str(tmp_path / "none.sqlite"),
                       "-o", str(tmp_path / "out.mlir")]) == 0
    err = capsys.readouterr().err
    assert "kernels from the heuristic" in err and "no tuning database at" in err


def test_batched_2x_gemms_take_square_tiles_only():
    # BERT-base b32's attention product: non-square 2.x tiles failed to launch on the H200
    text = ("func.func @main(%p: tensor<32x12x128x128xf16>, %v: tensor<32x12x128x64xf16>) -> tensor<32x12x128x64xf16> {\n"
            "  %0 = op.gemm %p, %v {epilogue = #op.epilogue<>} : (tensor<32x12x128x128xf16>, tensor<32x12x128x64xf16>) -> tensor<32x12x128x64xf16>\n"
            "  func.return %0 : tensor<32x12x128x64xf16>\n}\n")
    op = op_of(text)
    for sms in (108, 132):
        tile = HeuristicSelector(sms=sms, cutlass=2).select(op, "sm80").tile.threadblock
        assert tile[0] == tile[1]
    found = candidates(op, "sm90", 132, 3)
    assert all(c.tile.threadblock[0] == c.tile.threadblock[1] for c in found.choices if c.arch == "sm80")
    assert found.pruned["batched non-square 2.x tile"] > 0


@pytest.mark.slow
def test_a_build_after_tuning_links_the_tuners_objects(tmp_path, monkeypatch):
    """With the real nvcc (no GPU: the measuring process is faked): the tuner compiles three
    sm80 candidates in one unit, and the db-selected build of that op compiles no kernel."""
    import shutil

    from boltir.backends.cuda.codegen.host_program import build_program
    from boltir.backends.cuda.toolchain import nvcc

    if shutil.which("nvcc") is None and not os.environ.get("BOLTIR_NVCC"):
        pytest.skip("nvcc is not on PATH (set BOLTIR_NVCC)")
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_WORKER_LOG", str(tmp_path / "worker.log"))
    original_candidates = profiler.candidates

    def three_candidates(*args, **kwargs):
        found = original_candidates(*args, **kwargs)
        found.choices = found.choices[:3]
        return found

    monkeypatch.setattr(profiler, "candidates", three_candidates)
    worker = tmp_path / "worker.py"
    worker.write_text(FAKE_WORKER.replace("0.01 * (stub + 1)", "0.01 * (3 - stub)"))  # the last is fastest
    text = gemm_text(1024, 1024, 1024)
    tuner = Tuner(TuningDatabase.open(tmp_path / "t.sqlite"), "sm80", 2, progress=False, gpu=("Fake GPU", 108, "sm80"))
    tuner.worker_command = [sys.executable, str(worker)]
    (record,) = tuner.tune([op_of(text)]).values()
    assert [m.status for m in record.measurements] == ["ok"] * 3 and record.best == record.measurements[2].choice
    assert len(list((tmp_path / "cache" / "members").glob("*.json"))) == 3

    module = lowered_to_cutlass(text, "sm80", 2, "db", str(tmp_path / "t.sqlite"))
    compiled = units_compiled_by(monkeypatch)
    objects = nvcc.compile_objects(build_program(module).units, progress=False)
    assert compiled == ["host"]  # the tuned kernel came from the tuner's unit
    nvcc.link_shared_library(list(dict.fromkeys(objects)), tmp_path / "libmodel.so")

    # another op with the same three instances (sizes are launch arguments): nothing to
    # compile but the profiler's own unit, whatever units the new op set would have formed
    other = op_of(gemm_text(1024, 1024, 2048))
    _, jobs = tuner.plan([other])
    groups, _, ready = tuner.compile_units(jobs)
    assert groups == [] and len(ready) == 3
    del compiled[:]
    (again,) = tuner.tune([other]).values()
    assert [m.status for m in again.measurements] == ["ok"] * 3 and compiled == ["tune_profiler"]


# --------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
def test_tuning_on_the_gpu_times_with_graphs_and_builds_from_the_tuned_objects(tmp_path, monkeypatch):
    """The real profiler on a small sm80 GEMM: every candidate compiles, checks and is timed
    by graph replay; the build that follows links the winner from the tuner's objects."""
    from boltir.backends.cuda.codegen.host_program import build_program
    from boltir.backends.cuda.toolchain import nvcc

    text = gemm_text(1024, 1024, 1024)
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    (record,) = Tuner(database, "sm80", 2, progress=False).tune([op_of(text)]).values()
    ok = [m for m in record.measurements if m.status == "ok"]
    assert len(ok) >= 2 and record.best_ms > 0 and {m.timing for m in ok} == {"graph"}
    assert all(m.error < 1e-2 for m in ok)
    module = lowered_to_cutlass(text, "sm80", 2, "db", str(tmp_path / "t.sqlite"))
    compiles = units_compiled_by(monkeypatch)
    nvcc.compile_objects(build_program(module).units, progress=False)
    assert all(name == "host" for name in compiles), compiles  # the kernel came from the tuner's unit


def test_timing_rotates_at_least_two_operand_sets_and_exceeds_three_l2s():
    from boltir.backends.cuda.tune.worker import operand_sets

    l2 = 60 * 2**20
    assert operand_sets(205 * 2**20, l2, most=16) == 2  # larger than the L2: still two (it may keep part of one)
    assert operand_sets(50 * 2**20, l2, most=16) == 4  # 4 x 50 MB > 3 x 60 MB
    assert operand_sets(1024, l2, most=16) == 16


def test_the_3x_conv_is_also_raced_with_two_ctas_per_multiprocessor():
    """Stages = 0 (as many as fit) leave the non-persistent 3.x conv one CTA per SM; the
    tuner also times the heuristic's tile with the stages that let two share one."""
    from boltir.backends.cuda.codegen.cutlass_sm90 import occupancy_stages

    assert [occupancy_stages(t) for t in ((128, 64, 64), (128, 128, 64), (64, 64, 64), (128, 256, 64))] == [4, 3, 6, 2]
    assert occupancy_stages((256, 256, 64)) == 0  # not even 2 stages fit twice
    op = op_of(conv_text(32, 224, 224, 64, 64, 3, 3))  # CUTLASS's conv: the halo conv off
    heuristic = HeuristicSelector(sms=132, halo_convs=False).select(op, "sm90")
    found = candidates(op, "sm90", 132, 3, halo_mode=None).choices
    assert found[0] == heuristic and heuristic.tile.stages == 0
    assert found[1] == dataclasses.replace(heuristic, tile=dataclasses.replace(heuristic.tile, stages=4))
    lower_alone(single_op_module(op), found[1])


def test_a_3x_conv_of_48_output_channels_is_raced_on_48_wide_tiles():
    """RepVGG-A0's 3x3/2 on 48 channels (the halo conv's general form in the heuristic;
    CUTLASS's 2.x 128x64 before it, 1.1 TB/s on the H100): the 3.x candidates that race it
    lead with tiles whose N covers K, which lower (nvcc built the 128x48 instance:
    bench/RESULTS.md, thirty-fifth session)."""
    from boltir.backends.cuda.select.candidates import HOPPER_CONV_SHAPES, hopper_conv_shapes

    assert hopper_conv_shapes(64) == hopper_conv_shapes(128) == hopper_conv_shapes(512) == HOPPER_CONV_SHAPES
    assert hopper_conv_shapes(48)[-2:] == ((64, 48, 64), (128, 48, 64))
    assert hopper_conv_shapes(96)[-2:] == ((64, 96, 64), (128, 96, 64))
    assert hopper_conv_shapes(192)[-2:] == ((64, 192, 64), (128, 192, 64))
    op = op_of(conv_text(32, 112, 112, 48, 48, 3, 3, stride=2))
    found = candidates(op, "sm90", 132, 3).choices
    assert found[0].family == "halo_conv"  # the heuristic's: the halo conv's general form
    hopper = [choice for choice in found if choice.family == "conv2d_fprop" and choice.arch == "sm90"]
    assert [choice.tile.threadblock for choice in hopper[:2]] == [(128, 48, 64), (64, 48, 64)]
    lower_alone(single_op_module(op), hopper[0])


@pytest.mark.parametrize(("shape", "threadblock"), [((32, 28, 28, 96, 96), (128, 96, 64)), ((32, 14, 14, 192, 192), (64, 192, 64))])
def test_repvgg_a0_s_wide_convs_lead_with_covering_tiles_that_lower(shape, threadblock):
    """RepVGG-A0's 96- and 192-channel 3x3s at batch 32: the heuristic's choice, the tuner's
    first candidate, is the tile whose N covers K (1.26x and 1.65x the 64/128-wide ones on
    the H100, bench/RESULTS.md), and it lowers to a 3.x conv of that tile."""
    n, h, w, c, k = shape
    op = op_of(conv_text(n, h, w, c, k, 3, 3))
    first = candidates(op, "sm90", 132, 3).choices[0]
    assert (first.family, first.arch, first.tile.threadblock) == ("conv2d_fprop", "sm90", threadblock)
    _, conv = lower_alone(single_op_module(op), first)
    assert conv.name == "cutlass.conv2d_fprop" and conv.tile.value.threadblock == threadblock


def test_the_heuristics_choice_stands_unless_another_is_clearly_faster():
    """Timed alone, candidates within HEURISTIC_MARGIN of the heuristic's choice are not told
    apart: the record's best, and the database selector's choice, stay the heuristic's."""
    from boltir.backends.cuda.tune.database import HEURISTIC_MARGIN, Measurement, fastest_of

    heuristic, other = (KernelChoice("gemm", "sm80", Tile((m, 128, 32), (64, 64, 32), (16, 8, 16), 3), (8, 8, 8))
                        for m in (128, 256))
    close = [Measurement(heuristic, "ok", 1.0, 0.0, "", "graph"), Measurement(other, "ok", 0.99, 0.0, "", "graph")]
    assert fastest_of(close).choice == other
    assert fastest_of(close, prefer=heuristic).choice == heuristic
    clear = [close[0], Measurement(other, "ok", 1.0 / (1 + 2 * HEURISTIC_MARGIN), 0.0, "", "graph")]
    assert fastest_of(clear, prefer=heuristic).choice == other
    wrong = [Measurement(heuristic, "wrong", 0.5, 1.0, "", "graph"), close[1]]
    assert fastest_of(wrong, prefer=heuristic).choice == other


def test_the_fused_depthwise_pointwise_op_is_tuned_like_any(tmp_path, fake_tuner):
    """fuse-depthwise-pointwise's op (run before select-kernels, it meets the tuner): its
    tiles are measured and the fastest recorded, the expansion's filter scaled by its fan-in."""
    from boltir.backends.cuda.codegen import depthwise_pointwise_kernels
    from boltir.backends.cuda.passes.fuse_depthwise_pointwise import FuseDepthwisePointwisePass
    from tests.support.op_modules import inverted_residual_text

    module = parse_module(inverted_residual_text(n=32, h=28, w=28, cin=32, c=192, k=32), "<test>", ctx=make_context())
    FuseDepthwisePointwisePass(expand=True).apply(make_context(), module)
    op = next(o for o in module.walk() if isinstance(o, ops.DepthwisePointwiseConv2dOp))
    database = TuningDatabase.open(tmp_path / "t.sqlite")
    (record,) = fake_tuner(database).tune([op]).values()
    assert record.best.family == depthwise_pointwise_kernels.FAMILY and len(record.measurements) >= 4
    assert all(m.status == "ok" for m in record.measurements)
    scales = profiler.operand_scales(op)
    assert scales[list(op.operands).index(op.expand)] == pytest.approx((3.0 / 32) ** 0.5)
