"""The tuning data shipped with boltir: found as package data, taken by a build for the GPU
it was measured on where the user's database has no record, and always second to the
user's record; `bolt-tune db show --shipped` lists it."""

from __future__ import annotations

import json

import pytest

from boltir import compiler
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.backends.cuda.tune import selectors
from boltir.backends.cuda.tune.database import SHIPPED, TuningDatabase, TuningRecord, shipped_tuning, tuning_key
from boltir.backends.cuda.tune.selectors import DatabaseSelector
from boltir.dialects import op as ops
from boltir.ir import make_context, parse_module
from boltir.passes import statistics
from tests.support.op_modules import gemm_text

H200 = "NVIDIA H200"


def shipped_gemm():
    """A GEMM the shipped data has a record of (one of the reference workloads)."""
    module = parse_module(gemm_text(4096, 3072, 768), "<gemm>", ctx=make_context())
    return module, next(o for o in module.walk() if isinstance(o, ops.GemmOp))


def test_the_shipped_data_is_found():
    data = json.loads((SHIPPED / "tuning-h200.json").read_text())
    records = shipped_tuning().records()
    assert len(records) == len(data["records"]) > 0
    assert shipped_tuning().gpus() == {H200}
    _, gemm = shipped_gemm()
    assert shipped_tuning().lookup(tuning_key(gemm, "sm90", H200)) is not None
    assert shipped_tuning().lookup(tuning_key(gemm, "sm90", "")) is None  # only for the GPU it was measured on


@pytest.fixture
def raced_export(tmp_path, monkeypatch):
    """A shipped export whose record of `shipped_gemm` raced the heuristic's choice (and
    lost to a CUTLASS 2.x tile), in place of the package's: the mechanism, apart from how
    fresh the package's records are."""
    from boltir.backends.cuda.select.candidates import candidates
    from boltir.backends.cuda.tune import database

    _, gemm = shipped_gemm()
    choices = candidates(gemm, "sm90", 132).choices
    measurements = [_ok(choice, 0.05) for choice in choices]
    measurements[-1] = _ok(choices[-1], 0.02)
    record = TuningRecord(tuning_key(gemm, "sm90", H200), choices[-1], 0.02, measurements)
    folder = tmp_path / "shipped"
    folder.mkdir()
    (folder / "tuning-h200.json").write_text(json.dumps({"format": database.FORMAT, "records": [record.to_json()]}))
    monkeypatch.setattr(database, "_shipped", database.ShippedTuning(folder))
    return record


def test_a_record_that_never_raced_the_heuristic_gives_way(tmp_path, raced_export):
    """A shipped record measured before the heuristic chose what it chooses now is not
    used (the tuner's rule: it cannot say its choice is the faster)."""
    from boltir.backends.cuda.tune import database

    _, gemm = shipped_gemm()
    heuristic = HeuristicSelector(sms=132).select(gemm, "sm90")
    stale = raced_export
    stale.measurements = [m for m in stale.measurements if m.choice != heuristic]
    database.shipped_tuning()._records = {stale.key: stale}
    selector = DatabaseSelector(sms=132, tuning_db=str(tmp_path / "none.sqlite"), gpu=H200)
    assert selector.select(gemm, "sm90") == heuristic
    assert selector.counts == {"kernels from the heuristic": 1, "records that never raced the heuristic's choice": 1}


def test_a_build_for_that_gpu_takes_it(tmp_path, raced_export):
    _, gemm = shipped_gemm()
    record = shipped_tuning().lookup(tuning_key(gemm, "sm90", H200))
    assert record is raced_export or record.best == raced_export.best
    selector = DatabaseSelector(sms=132, tuning_db=str(tmp_path / "none.sqlite"), gpu=H200)
    heuristic = HeuristicSelector(sms=132).select(gemm, "sm90")
    assert selector.select(gemm, "sm90") == record.best_of(lambda choice: True, prefer=heuristic)[0]
    assert selector.counts == {"kernels from the shipped tuning data": 1}
    assert "tuning data shipped for the NVIDIA H200" in selector.notes[0]
    anywhere = DatabaseSelector(sms=132, tuning_db=str(tmp_path / "none.sqlite"))  # no GPU named: no shipped data
    assert anywhere.select(gemm, "sm90") == HeuristicSelector(sms=132).select(gemm, "sm90")
    assert anywhere.counts == {"kernels from the heuristic": 1}


def test_the_users_record_wins(tmp_path):
    _, gemm = shipped_gemm()
    key = tuning_key(gemm, "sm90", H200)
    shipped = shipped_tuning().lookup(key).best_of(lambda choice: True)[0]
    heuristic = HeuristicSelector(sms=132).select(gemm, "sm90")
    ours = heuristic if heuristic != shipped else HeuristicSelector(sms=132, cutlass=2).select(gemm, "sm90")
    assert isinstance(ours, KernelChoice) and ours != shipped
    path = tmp_path / "user.sqlite"
    with TuningDatabase.open(path) as database:
        database.store(TuningRecord(key, ours, 0.5, [_ok(ours, 0.5)]))
    selector = DatabaseSelector(sms=132, tuning_db=str(path), gpu=H200)
    assert selector.select(gemm, "sm90") == ours
    assert selector.counts == {"kernels from the tuning database": 1}


def _ok(choice, ms):
    from boltir.backends.cuda.tune.database import Measurement

    return Measurement(choice, "ok", ms, 0.0, "", "graph")


def _select_step(passes: list[str]) -> str:
    return next(step for step in passes if step.startswith("select-kernels{"))


def test_the_pipeline_names_this_machines_gpu_where_data_ships(monkeypatch):
    monkeypatch.setattr(selectors, "local_gpu_name", lambda: H200)
    assert 'gpu="NVIDIA H200"' in _select_step(compiler.backend_passes("sm90"))
    assert "gpu=" not in _select_step(compiler.backend_passes("sm90", selector="heuristic"))
    assert "gpu=" not in _select_step(compiler.backend_passes("sm90", gpu=""))
    monkeypatch.setattr(selectors, "local_gpu_name", lambda: "NVIDIA A100-SXM4-80GB")
    assert "gpu=" not in _select_step(compiler.backend_passes("sm90"))
    monkeypatch.setattr(selectors, "local_gpu_name", lambda: "")
    assert "gpu=" not in _select_step(compiler.backend_passes("sm90"))


def test_select_kernels_through_the_pipeline_string(tmp_path, monkeypatch, raced_export):
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path))  # no user database
    monkeypatch.setattr(selectors, "local_gpu_name", lambda: H200)
    module, gemm = shipped_gemm()
    heuristic = HeuristicSelector(sms=132).select(gemm, "sm90")
    expected = shipped_tuning().lookup(tuning_key(gemm, "sm90", H200)).best_of(lambda choice: True, prefer=heuristic)[0]
    from boltir.pipelines import available_passes, parse_pipeline_spec, run_passes

    [select] = parse_pipeline_spec(_select_step(compiler.backend_passes("sm90")), available_passes())
    assert isinstance(select, SelectKernelsPass) and select.gpu == H200
    with statistics.collecting() as collected:
        run_passes(module, [select], make_context())
    gemm = next(o for o in module.walk() if isinstance(o, ops.GemmOp))
    assert gemm.attributes[KERNEL_ATTR] == expected.to_attr()
    assert compiler.tuning_summary(collected)["state"] == "tuned"


def test_bolt_tune_shows_the_shipped_data(capsys):
    from boltir.tools.bolt_tune import main

    assert main(["db", "show", "--shipped"]) == 0
    out = capsys.readouterr().out
    records = len(shipped_tuning().records())
    assert out.rstrip().endswith(f"{records} records in {SHIPPED}")
    assert out.count(H200) == records


@pytest.fixture(autouse=True)
def fresh_gpu_name():
    selectors.local_gpu_name.cache_clear()
    yield
    selectors.local_gpu_name.cache_clear()


def test_the_shipped_mode_1_halo_records_yield_to_the_default_mode(tmp_path):
    """The shipped H200 record of VGG-16 b32's 3x3 64 -> 64 conv at 224² timed the halo
    conv's modes 1 and 2 only; the heuristic now gives it mode 4 (halo_conv_kernels.
    DEFAULT_MODE), which that record never raced, so a build for the H200 takes mode 4."""
    from boltir.backends.cuda.codegen import halo_conv_kernels as hc
    from tests.support.op_modules import conv_text

    module = parse_module(conv_text(32, 224, 224, 64, 64, 3, 3), "<conv>", ctx=make_context())
    conv = next(o for o in module.walk() if isinstance(o, ops.Conv2dOp))
    record = shipped_tuning().lookup(tuning_key(conv, "sm90", H200))
    assert record is not None and hc.HaloTile.of(record.best.tile).mode == 1
    selector = DatabaseSelector(sms=132, tuning_db=str(tmp_path / "none.sqlite"), gpu=H200)
    chosen = selector.select(conv, "sm90")
    assert chosen.family == hc.FAMILY and hc.HaloTile.of(chosen.tile) == hc.HaloTile(112, 2, hc.DEFAULT_MODE)
    assert selector.counts == {"kernels from the heuristic": 1, "records that never raced the heuristic's choice": 1}
