"""Where boltir finds nvcc: BOLTIR_NVCC, CUDA_HOME / CUDA_PATH, PATH, /usr/local/cuda*/bin
(the newest toolkit the driver runs), each place tried with fake executables."""

from __future__ import annotations

from pathlib import Path

import pytest

from boltir.backends.cuda.toolchain import nvcc
from boltir.diagnostics import BoltError


def fake_nvcc(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "nvcc"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def nowhere(tmp_path, monkeypatch) -> Path:
    """No nvcc anywhere: the variables unset, PATH empty, no toolkit under the glob root."""
    for variable in ("BOLTIR_NVCC", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    root = tmp_path / "usr-local"
    root.mkdir()
    monkeypatch.setattr(nvcc, "TOOLKIT_GLOB_ROOT", root)
    monkeypatch.setattr(nvcc, "driver_cuda_version", lambda: None)
    return root


def test_boltir_nvcc_comes_first(tmp_path, nowhere, monkeypatch):
    chosen = fake_nvcc(tmp_path / "chosen")
    monkeypatch.setenv("CUDA_HOME", str(fake_nvcc(tmp_path / "home" / "bin").parent.parent))
    monkeypatch.setenv("BOLTIR_NVCC", str(chosen))
    assert nvcc.find_nvcc() == chosen


def test_cuda_home_then_cuda_path(tmp_path, nowhere, monkeypatch):
    home = fake_nvcc(tmp_path / "home" / "bin")
    other = fake_nvcc(tmp_path / "other" / "bin")
    monkeypatch.setenv("PATH", str(fake_nvcc(tmp_path / "on-path").parent))
    monkeypatch.setenv("CUDA_PATH", str(other.parent.parent))
    assert nvcc.find_nvcc() == other
    monkeypatch.setenv("CUDA_HOME", str(home.parent.parent))
    assert nvcc.find_nvcc() == home


def test_path_before_usr_local(tmp_path, nowhere, monkeypatch):
    fake_nvcc(nowhere / "cuda-13.0" / "bin")
    on_path = fake_nvcc(tmp_path / "on-path")
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert Path(nvcc.find_nvcc()) == on_path


def test_usr_local_takes_the_newest_toolkit_the_driver_runs(nowhere, monkeypatch):
    old = fake_nvcc(nowhere / "cuda-12.4" / "bin")
    middle = fake_nvcc(nowhere / "cuda-12.10" / "bin")
    new = fake_nvcc(nowhere / "cuda-13.0" / "bin")
    assert nvcc.find_nvcc() == new  # no driver: the newest
    monkeypatch.setattr(nvcc, "driver_cuda_version", lambda: (12, 10))
    assert nvcc.find_nvcc() == middle  # 12.10 is newer than 12.4 (numbers, not text)
    monkeypatch.setattr(nvcc, "driver_cuda_version", lambda: (12, 6))
    assert nvcc.find_nvcc() == old


def test_usr_local_cuda_link_when_no_version_fits(nowhere, monkeypatch):
    fake_nvcc(nowhere / "cuda-13.0" / "bin")
    default = fake_nvcc(nowhere / "cuda" / "bin")
    monkeypatch.setattr(nvcc, "driver_cuda_version", lambda: (11, 8))
    assert nvcc.find_nvcc() == default


def test_a_cuda_home_without_nvcc_is_named_in_the_error(tmp_path, nowhere, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "broken"))
    with pytest.raises(BoltError) as error:
        nvcc.find_nvcc()
    assert error.value.message == (
        f"nvcc not found (looked in CUDA_HOME={tmp_path}/broken (no bin/nvcc), CUDA_PATH (unset), PATH, "
        f"{nowhere}/cuda*/bin): install the CUDA toolkit 13.0, or set CUDA_HOME or BOLTIR_NVCC"
    )


def test_a_non_executable_is_not_taken(tmp_path, nowhere, monkeypatch):
    home = fake_nvcc(tmp_path / "home" / "bin")
    home.chmod(0o644)
    monkeypatch.setenv("CUDA_HOME", str(home.parent.parent))
    with pytest.raises(BoltError, match="no bin/nvcc"):
        nvcc.find_nvcc()


def test_the_driver_version_is_read_or_none():
    version = nvcc.driver_cuda_version()
    assert version is None or (isinstance(version, tuple) and len(version) == 2 and version[0] >= 10)
