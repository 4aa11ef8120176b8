"""The README and docs/*.md name only things that exist: every repository path they put in
backticks or code blocks (`boltir/backends/cuda/tune/tuner.py`, `bench/models.py`,
`tests/filecheck/...`), every module they run with `python -m`, and every boltir module
or attribute they name or import (`boltir.runtime.load`, `from boltir.frontends.onnx import
import_model`). And no tracked file points outside the repository at the old design notes.

What is not a repository path is left alone: output paths (`out/`), file names
(`model.onnx`), home and absolute paths (`~/.cache/boltir`, `/tmp/site`), URLs, hidden
build folders (`.venv/`, `.whl/`, `.kcache/`); in a path with a placeholder (`<name>`,
`$OUT`, `...`) only the part before it is checked, and a `*` must match something.
"""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

NOT_IN_THE_REPOSITORY = {"build", "dist"}
"""Top-level folders that builds make."""

PLACEHOLDER = re.compile(r"[<>$]|\.\.\.|…")
TOKEN_SEPARATORS = re.compile(r"[\s()\[\],;'\"=|{}]+")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
PYTHON_MODULE_RUN = re.compile(r"(?:^|\s)-m\s+([A-Za-z_][\w.]*)")
DOTTED_NAME = re.compile(r"^(boltir(?:\.[A-Za-z_]\w*)*)(?:\.\*)?(?:\(.*\))?$")
PYTHON_IMPORT = re.compile(r"^\s*from\s+(boltir[\w.]*)\s+import\s+([\w, ]+)|^\s*import\s+(boltir[\w.]*)", re.M)


def repository_roots() -> set[str]:
    """The top-level names a repository path starts with (`.ci` is the one hidden one)."""
    names = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") and not p.name.endswith(".egg-info")}
    return (names - NOT_IN_THE_REPOSITORY) | {".ci"}


def code_of(text: str) -> list[str]:
    """The code a document shows: each fenced block, and each inline span outside them."""
    blocks = FENCE.findall(text)
    prose = FENCE.sub("", text)
    return blocks + INLINE_CODE.findall(prose)


def path_tokens(code: str, roots: set[str]) -> list[str]:
    """The repository paths a piece of code names."""
    found = []
    for token in TOKEN_SEPARATORS.split(code):
        token = token.rstrip(".:").removeprefix("./")
        if token.startswith(("http://", "https://")) or "/" not in token:
            continue
        if token.split("/")[0] in roots:
            found.append(token)
    return found


def git_ignored(paths: list[Path]) -> set[Path]:
    """Which of these paths git ignores (a clone does not have them); none outside git."""
    try:
        listed = subprocess.run(["git", "check-ignore", "-z", "--stdin"], cwd=ROOT, capture_output=True,
                                input="\0".join(str(p) for p in paths).encode() + b"\0").stdout
    except OSError:
        return set()
    return {Path(name) for name in listed.decode().split("\0") if name}


def path_exists(token: str) -> bool:
    """The path (up to its first placeholder) is in the repository: on disk, not ignored."""
    parts = token.rstrip("/").split("/")
    cut = next((i for i, part in enumerate(parts) if PLACEHOLDER.search(part)), len(parts))
    checked = "/".join(parts[:cut])
    directory = cut < len(parts) or token.endswith("/")
    found = [p for p in ROOT.glob(checked) if p.is_dir() or not directory] if "*" in checked else [ROOT / checked]
    found = [p for p in found if (p.is_dir() if directory else p.exists())]
    return bool(found) and bool(set(found) - git_ignored(found))


def module_exists(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def resolves(dotted: str) -> bool:
    """A module, or an attribute reached from the longest importable module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as error:
            if error.name and not error.name.startswith("boltir"):
                pytest.skip(f"{dotted} needs {error.name}, which is not installed")
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def named_paths() -> list[tuple[str, str]]:
    roots = repository_roots()
    return [(doc.name, token) for doc in DOCUMENTS for code in code_of(doc.read_text()) for token in path_tokens(code, roots)]


def named_python(doc: Path) -> list[str]:
    """boltir modules and attributes the document names or imports in its code."""
    names = []
    for code in code_of(doc.read_text()):
        match = DOTTED_NAME.match(code.strip())
        if match:
            names.append(match.group(1))
        for module, imported, plain in PYTHON_IMPORT.findall(code):
            names.extend([plain] if plain else [f"{module}.{name.strip()}" for name in imported.split(",") if name.strip()])
    return names


def test_the_documents_are_there():
    assert (ROOT / "docs" / "ARCHITECTURE.md") in DOCUMENTS and (ROOT / "docs" / "BENCHMARKING.md") in DOCUMENTS


def test_every_path_the_documents_name_exists():
    paths = named_paths()
    assert len(paths) > 30  # the documents do name paths: the scan itself works
    missing = [f"{doc}: {token}" for doc, token in paths if not path_exists(token)]
    assert not missing, "paths named in the documentation that do not exist:\n" + "\n".join(missing)


def test_every_module_the_documents_run_exists():
    modules = [(doc.name, m) for doc in DOCUMENTS for code in code_of(doc.read_text()) for m in PYTHON_MODULE_RUN.findall(code)
               if m.split(".")[0] in ("bench", "tests", "boltir") and not any(part.isupper() for part in m.split("."))]
    assert any(m.startswith("bench.") for _, m in modules)
    missing = [f"{doc}: python -m {m}" for doc, m in modules if not module_exists(m)]
    assert not missing, "modules run in the documentation that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: p.name)
def test_every_boltir_name_the_documents_use_resolves(doc):
    missing = [name for name in dict.fromkeys(named_python(doc)) if not resolves(name)]
    assert not missing, f"{doc.name} names boltir modules or attributes that do not exist: {missing}"


def test_the_checks_catch_what_they_should():
    roots = repository_roots()
    assert path_tokens("python3 bench/models.py --out out/ ~/.cache/boltir https://xdsl.dev/a/b .venv/bin/lit", roots) == [
        "bench/models.py"]
    assert path_exists("tests/filecheck/passes/<name>.mlir") and path_exists("boltir/backends/cuda/codegen/templates/")
    assert not path_exists("bench/no_such_script.py") and not path_exists("tests/no_such_folder/<name>.mlir")
    assert path_exists("tests/filecheck/*/") and not path_exists("tests/*.no_such_suffix")
    assert path_tokens(".ci/run calls", roots) == [".ci/run"] and path_exists(".ci/run")
    assert not path_exists("bench/logs/")  # ignored by git: a clone has no such folder
    assert resolves("boltir.runtime.load") and not resolves("boltir.backends.cuda.selection.make_selector")
    assert module_exists("bench.models") and not module_exists("bench.no_such_script")


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed.decode().split("\0") if name]


def test_no_tracked_file_points_outside_the_repository():
    needle = ("../" + "shared").encode()  # spelled in two parts so that this file does not match itself
    hits = [str(path.relative_to(ROOT)) for path in tracked_files() if path.is_file() and needle in path.read_bytes()]
    assert not hits, "these files refer to the shared folder beside the checkout, which a clone does not have: " + ", ".join(hits)
