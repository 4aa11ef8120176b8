"""The GPU target records: how many CTAs in clusters run at once."""

from __future__ import annotations

import pytest

from boltir.target import get_target


@pytest.mark.parametrize("cluster, ctas", [(1, 132), (2, 132), (4, 120), (8, 120), (16, 112)])
def test_sm90_clusters_of_four_or_more_leave_multiprocessors_idle(cluster, ctas):
    """As cudaOccupancyMaxActiveClusters gave them on an H100 (bench/cluster_capacity.cu):
    a cluster runs inside one GPC."""
    assert get_target("sm90").concurrent_ctas(cluster) == ctas


def test_other_gpus_scale_with_their_multiprocessors_in_whole_clusters():
    sm90 = get_target("sm90")
    assert sm90.concurrent_ctas(1, 114) == 114
    assert sm90.concurrent_ctas(4, 114) == 100  # 120 x 114 / 132 = 103: 25 clusters
    assert sm90.concurrent_ctas(8, 4) == 8  # at least one cluster


def test_a_target_without_cluster_figures_runs_one_cta_a_multiprocessor():
    assert get_target("sm80").concurrent_ctas(4) == 108
