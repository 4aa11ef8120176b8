"""bench/tune.py's shipped export (`write_shipped`), without a GPU: the package file keeps its
order and every record this run did not measure again byte for byte; newer records take
their keys' places and new keys follow."""

from __future__ import annotations

import copy
import json

from bench import tune
from boltir.backends.cuda.tune.database import FORMAT, TuningDatabase, TuningRecord


def shipped_records(count: int = 3) -> list[dict]:
    from boltir.backends.cuda.tune.database import SHIPPED

    return json.loads((SHIPPED / "tuning-h200.json").read_text())["records"][:count]


def test_the_export_keeps_the_files_order_and_replaces_only_what_was_measured(tmp_path, monkeypatch):
    first, second, third = shipped_records()
    package = tmp_path / "shipped"
    package.mkdir()
    (package / "tuning-h200.json").write_text(json.dumps({"format": FORMAT, "records": [first, second, third]}))
    monkeypatch.setattr("boltir.backends.cuda.tune.database.SHIPPED", package)
    monkeypatch.setattr("boltir.backends.cuda.tune.tuner.gpu_identity", lambda: ("NVIDIA H200", 132, "sm90"))

    measured = copy.deepcopy(second)
    measured["measured_at"] = "2099-01-01T00:00:00+00:00"
    measured["best_ms"] = 0.001
    fresh = copy.deepcopy(first)
    fresh["key"]["problem"] = "a key the file lacks"
    fresh["measured_at"] = "2099-01-01T00:00:00+00:00"
    database = TuningDatabase.open(tmp_path / "db.sqlite")
    for record in (measured, fresh, copy.deepcopy(third)):  # the third as the file has it: not newer
        database.store(TuningRecord.from_json(record))
    # the database's round trip may reorder a record's measurements: an unchanged one must not move
    path = tune.write_shipped(database, tmp_path / "out.json")
    records = json.loads(path.read_text())["records"]
    assert [r["key"]["problem"] for r in records] == [first["key"]["problem"], second["key"]["problem"],
                                                      third["key"]["problem"], "a key the file lacks"]
    assert records[0] == first and records[2] == third
    assert records[1]["best_ms"] == 0.001 and records[1]["measured_at"].startswith("2099")
