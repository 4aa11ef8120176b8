"""A fresh random generator per test; its seed is printed, and BOLTIR_TEST_SEED replays it."""

import os

import numpy as np
import pytest


@pytest.fixture
def rng():
    seed = int(os.environ.get("BOLTIR_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
    print(f"seed: {seed} (BOLTIR_TEST_SEED={seed} replays this test)")
    return np.random.default_rng(seed)
