import os

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh random generator per test; its seed is printed (shown when the test fails)
    and can be replayed with BOLTIR_TEST_SEED=<seed>."""
    seed = int(os.environ.get("BOLTIR_TEST_SEED") or np.random.SeedSequence().entropy)
    print(f"rng seed: {seed} (replay with BOLTIR_TEST_SEED={seed})")
    return np.random.default_rng(seed)
