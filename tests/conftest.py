"""Shared pytest configuration: GPU tests are skipped, with the reason, where there is none."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def _gpu_available() -> tuple[bool, str]:
    if shutil.which("nvidia-smi") is None:
        return False, "no NVIDIA GPU here (nvidia-smi not found)"
    try:
        subprocess.run(["nvidia-smi", "-L"], check=True, capture_output=True, timeout=30)
    except (subprocess.SubprocessError, OSError) as error:
        return False, f"no usable NVIDIA GPU here ({error})"
    return True, ""


def pytest_collection_modifyitems(config, items):
    gpu_tests = [item for item in items if "gpu" in item.keywords]
    if not gpu_tests:
        return
    available, reason = _gpu_available()
    if not available:
        for item in gpu_tests:
            item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh random generator per test; its seed is printed (shown when the test fails)
    and can be replayed with BOLTIR_TEST_SEED=<seed>."""
    seed = int(os.environ.get("BOLTIR_TEST_SEED") or np.random.SeedSequence().entropy)
    print(f"rng seed: {seed} (replay with BOLTIR_TEST_SEED={seed})")
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def small_resnet(tmp_path_factory) -> Path:
    """A directory with the bundled example's model (examples/small_resnet/make_model.py):
    small_resnet.onnx, small_resnet.mlir and input.npz."""
    directory = tmp_path_factory.mktemp("small_resnet")
    subprocess.run([sys.executable, str(REPO_ROOT / "examples/small_resnet/make_model.py"), str(directory)], check=True,
                   capture_output=True)
    return directory
