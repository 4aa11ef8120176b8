"""bench.compile_sweep's --part: N calls share the sweep, each instance in exactly one
share, each family spread evenly; a malformed --part is a one-line usage error."""

from __future__ import annotations

import pytest

from bench.compile_sweep import main, share


def test_shares_partition_and_balance_families():
    found = {f"{family}_{i}": family for family in ("3x", "2x", "own") for i in range(7)}
    shares = [share(found, k, 3, key=lambda name: (found[name], name)) for k in (1, 2, 3)]
    names = [name for part in shares for name in part]
    assert sorted(names) == sorted(found)
    for part in shares:
        for family in ("3x", "2x", "own"):
            assert sum(1 for name in part if found[name] == family) in (2, 3)


@pytest.mark.parametrize("bad", ["0/2", "3/2", "x", "1/0", "1-2"])
def test_bad_part_is_a_usage_error(capsys, bad):
    with pytest.raises(SystemExit) as stop:
        main(["--part", bad])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--part: expected K/N" in err
