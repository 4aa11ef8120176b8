"""The layers run one way and the import graph has no cycle (docs/ARCHITECTURE.md).

The contracts live in pyproject.toml's `[tool.importlinter]` (import-linter); `lint-imports`
runs them by hand. Imports inside functions count as much as module-level ones: a lazy
import that crosses a layer upward is as much a violation as any other.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import networkx as nx
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent


def test_import_linter_contracts_are_kept(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    report = capsys.readouterr().out
    assert status == 0, "a layering contract is broken (the offending imports are named):\n" + report


def import_graph() -> nx.DiGraph:
    graph = grimp.build_graph("boltir", cache_dir=None)
    edges = nx.DiGraph()
    for module in graph.modules:
        edges.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            edges.add_edge(module, imported)
    return edges


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    described = []
    for component in cycles:
        cycle = nx.find_cycle(graph.subgraph(component))
        described.append(" -> ".join([a for a, _ in cycle] + [cycle[0][0]]))
    assert not cycles, "import cycles:\n" + "\n".join(described)


def test_a_new_cycle_or_upward_import_is_named(tmp_path, monkeypatch, capsys):
    """The check itself: a layer importing upward breaks a contract, and the report
    names the import (run against a copy of the contracts on a tiny package)."""
    package = tmp_path / "layered"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("import layered.high\n")
    (package / "high.py").write_text("import layered.low\n")
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "layered"\n'
        '[[tool.importlinter.contracts]]\nname = "one way"\ntype = "layers"\nlayers = ["layered.high", "layered.low"]\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert lint_imports(config_filename=str(config), no_cache=True, no_logo=True) == 1
    assert "layered.low -> layered.high" in capsys.readouterr().out
