"""Every file the package reads at run time is declared package data, so that a wheel has
it: the CUDA templates and the shipped tuning data (pyproject.toml's
`[tool.setuptools.package-data]`)."""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent


def declared_globs() -> list[str]:
    """Each package-data pattern as a path from the repository root."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"].get("package-data", {})
    return [f"{package.replace('.', '/')}/{pattern}" for package, patterns in data.items() for pattern in patterns]


def matches(path: PurePosixPath, pattern: str) -> bool:
    """`pattern` matches the whole path (setuptools' globs do not cross folders)."""
    return len(path.parts) == len(PurePosixPath(pattern).parts) and path.match(pattern)


def test_every_data_file_of_the_package_is_declared():
    data_files = [PurePosixPath(p.relative_to(ROOT).as_posix()) for p in (ROOT / "boltir").rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".py", ".pyi")]
    globs = declared_globs()
    undeclared = [str(p) for p in data_files if not any(matches(p, g) for g in globs)]
    assert data_files and not undeclared, f"not in [tool.setuptools.package-data], so not in a wheel: {undeclared}"


def test_the_shipped_tuning_data_is_there():
    assert (ROOT / "boltir/backends/cuda/tune/shipped/tuning-h200.json").is_file()
