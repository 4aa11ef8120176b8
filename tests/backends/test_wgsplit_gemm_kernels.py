"""Our Hopper GEMM for few rows with K split among a cluster's CTAs and their warp groups
(codegen/wgsplit_gemm_kernels.py, family "wgsplit_gemm").

Without a GPU: which GEMMs it takes and why not, its tiles and why not, the default tile,
the choice through lower-op-to-cutlass (the op.gemm stays, the module computes the same),
the emitted instance (constants, the CUTLASS GEMM launcher's ABI, both weight layouts,
deduplication), the tuner's candidates and their names. The `slow` test compiles a unit
with the real nvcc for sm_90a (skipped without it).
"""

from __future__ import annotations

import pytest

from boltir.backends.cuda.codegen import cutlass_sm90, tiled_families
from boltir.backends.cuda.codegen import wgsplit_gemm_kernels as wg
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.select.candidates import MAX_WGSPLIT, candidates
from boltir.backends.cuda.tune.database import describe_choice
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.ir import parse_module
from tests.passes.equivalence import assert_equivalent
from tests.support.op_modules import gemm_text, tensor
from tests.support.own_kernel_units import SM90A, assert_unit_compiles, mark


def the_gemm(module) -> ops.GemmOp:
    return next(op for op in module.walk() if isinstance(op, ops.GemmOp))


def gemm_of(*args, **kwargs) -> ops.GemmOp:
    return the_gemm(parse_module(gemm_text(*args, **kwargs)))


def marked(text: str, tile: wg.SplitTile) -> ops.GemmOp:
    return mark(the_gemm(parse_module(text)), wg, tile, "sm90")


BERT_FFN2 = gemm_text(128, 768, 3072, epilogue="bias, residual = add", layout_b="row")


# ------------------------------------------------------------------ what it takes


@pytest.mark.parametrize("text", [
    BERT_FFN2,
    gemm_text(128, 3072, 768, epilogue="bias, gelu", layout_b="row"),
    gemm_text(197, 2304, 768),  # ViT-B/16 b1's QKV, a partial last row tile
    gemm_text(32, 512, 1024, element="bf16", batch=4, shared_b=True),  # a batch folded into 128 rows
    gemm_text(256, 72, 1000, epilogue=""),
])
def test_it_takes_few_row_gemms_of_16_bit_elements(text):
    assert wg.gemm_reason(the_gemm(parse_module(text))) is None


@pytest.mark.parametrize("text, reason", [
    (gemm_text(257, 768, 768), "257 rows of A: the kernel takes at most 256"),
    (gemm_text(128, 768, 768, element="f32"), "A has element type f32; the kernel takes f16, bf16"),
    (gemm_text(128, 768, 100), "K = 100 and N = 768: TMA takes rows of a multiple of 16 bytes"),
    (gemm_text(128, 100, 768, layout_b="row"), "K = 768 and N = 100: TMA takes rows of a multiple of 16 bytes"),
    (gemm_text(32, 64, 128, batch=4), "the weight has batch dimensions: the kernel folds only A's batch into its rows"),
    (gemm_text(128, 768, 64), "K = 64 is one k-tile of 64: nothing to split among 2 warp groups"),
])
def test_what_it_does_not_take_and_why(text, reason):
    assert wg.gemm_reason(the_gemm(parse_module(text))) == reason


def test_a_column_major_a_is_refused():
    args = f"%x: {tensor((768, 128), 'f16')}, %w: {tensor((768, 768), 'f16')}"
    out = tensor((128, 768), "f16")
    text = (f"func.func @main({args}) -> {out} {{\n  %0 = op.gemm %x, %w {{layout_a = \"col\", layout_b = \"col\"}} : "
            f"({tensor((768, 128), 'f16')}, {tensor((768, 768), 'f16')}) -> {out}\n  func.return %0 : {out}\n}}\n")
    assert wg.gemm_reason(the_gemm(parse_module(text))) == "the kernel takes a row-major A (M x K)"


@pytest.mark.parametrize("tile, reason", [
    (wg.SplitTile(48, 32, 1), "a tile has 64 or 128 rows, not 48"),
    (wg.SplitTile(64, 96, 1), "a tile is 32 or 48 or 64 columns wide, not 96"),
    (wg.SplitTile(64, 32, 3), "K splits among 1, 2, 4, 8 CTAs of a cluster, not 3"),
    (wg.SplitTile(64, 64, 8), "12 k-tiles of 64 cannot give each of 16 warp groups one"),
])
def test_tiles_it_cannot_run(tile, reason):
    assert wg.tile_reason(gemm_of(128, 768, 768), tile) == reason


def test_each_warp_group_needs_a_k_tile():
    assert wg.tile_reason(gemm_of(128, 768, 128), wg.SplitTile(64, 32, 2)) == (
        "2 k-tiles of 64 cannot give each of 4 warp groups one")
    assert wg.warp_groups(gemm_of(128, 768, 128), wg.SplitTile(64, 32, 1)) == 2


def test_a_clusters_runs_are_equal():
    """A cluster's rings of one index release each other's stages, so every run of a cluster
    has as many k-tiles; one CTA splits unevenly."""
    assert wg.tile_reason(gemm_of(128, 768, 640), wg.SplitTile(64, 64, 4)) == (
        "10 k-tiles of 64 do not split evenly among 8 warp groups of a cluster")
    assert wg.warp_groups(gemm_of(128, 768, 768), wg.SplitTile(64, 64, 2)) == 2  # 12 k-tiles: 4 runs of 3 (none has 4)
    assert wg.warp_groups(gemm_of(128, 768, 640), wg.SplitTile(64, 64, 1)) == 2  # 10 k-tiles: 5, 5 (4 a run at least)
    assert wg.group_reason(gemm_of(128, 768, 640), wg.SplitTile(64, 64, 1), 3) is None  # 3, 3, 4: one CTA may


def test_warp_groups_leave_each_run_four_k_tiles_and_their_threads_the_registers_they_need():
    ffn2 = gemm_of(128, 768, 3072)  # 48 k-tiles
    assert wg.warp_groups(ffn2, wg.SplitTile(64, 32, 2)) == 4   # 8 runs of 6
    assert wg.warp_groups(ffn2, wg.SplitTile(64, 64, 4)) == 3   # 12 runs of 4; 16 of 3 would be under 4
    assert wg.warp_groups(ffn2, wg.SplitTile(128, 64, 8)) == 2  # 16 runs of 3: the fewest
    # 128 x 64: 64 accumulators a thread; five warp groups leave 96 registers a thread
    assert wg.group_reason(ffn2, wg.SplitTile(128, 64, 1), 4) == (
        "4 warp groups leave a thread 96 registers, under its 64 accumulators and 48 more")
    assert wg.warp_groups(ffn2, wg.SplitTile(128, 64, 1)) == 3


def test_every_deepest_ring_fits():
    for block_m in wg.BLOCK_M:
        for block_n in wg.BLOCK_N:
            for split in wg.SPLITS:
                stages = wg.most_stages(block_m, block_n, split)
                shared = lambda s: wg.shared_bytes(block_m, block_n, split, s)  # noqa: E731
                assert 2 <= stages <= wg.MAX_STAGES and shared(stages) <= wg.SHARED_LIMIT - 1024
                assert stages == wg.MAX_STAGES or shared(stages + 1) > wg.SHARED_LIMIT - 1024
                # a group's partial tile (f32) fits in its ring once consumed
                assert stages * 2 * (block_m + block_n) * wg.TILE_K >= 4 * block_m * block_n


@pytest.mark.parametrize("m, n, k, tile, groups", [
    # BERT b1's FFN2: 64-column tiles would fill under half a wave, so 32; two CTAs a tile
    # (96 in all), 24 k-tiles a CTA, 6 a group (the fastest of its tiles, bench/RESULTS.md)
    (128, 768, 3072, (64, 32, 2), 4),
    (128, 3072, 768, (64, 64, 1), 3),   # FFN1: 96 tiles of 64 columns fill the wave alone; 12 k-tiles, 4 a group
    (128, 768, 768, (64, 32, 2), 2),    # the output projection: 12 k-tiles, 3 a group
    (128, 2304, 768, (64, 64, 1), 3),   # QKV: 72 tiles; a cluster of two would be 144 CTAs
    (197, 768, 3072, (64, 32, 1), 4),   # ViT-B/16's FFN2: 4 row tiles x 24 = 96 CTAs
    (64, 72, 1000, (64, 32, 4), 2),     # 16 k-tiles (the last partial): 8 runs of 2
])
def test_default_tile(m, n, k, tile, groups):
    """The heuristic's tile has 64 rows and at most 4 CTAs (DEFAULT_SHAPES: the shapes timed
    when it became the default)."""
    op = gemm_of(m, n, k)
    assert wg.default_tile(op, sms=132) == wg.SplitTile(*tile)
    assert wg.warp_groups(op, wg.default_tile(op, sms=132)) == groups
    assert wg.ctas_of(op, wg.default_tile(op, sms=132)) <= 132


def test_ranked_tiles_put_one_wave_first_then_the_narrow_width_then_the_fewest_bytes_an_sm_reads():
    ffn2 = gemm_of(128, 768, 3072)
    ranked = wg.ranked_tiles(ffn2, sms=132, block_ms=(64,), ctas_options=(1, 2, 4))
    # past the narrow width, the fewest bytes: 64 x 64 on a quarter of K reads (64 + 64) / 4;
    # 64 x 48 on a quarter is 128 CTAs in clusters of four, two waves (120 run at once)
    assert [t.describe() for t in ranked[:4]] == ["64x32x2", "64x32x1", "64x64x4", "64x48x2"]
    assert [t.describe() for t in ranked[-2:]] == ["64x32x4", "64x48x4"]
    # 128 rows: a CTA of 128 x 32 on a quarter of K reads (128 + 32) / 4 = 40 elements a K
    # step, under the 64-row tile's (64 + 32) / 2 = 48
    everything = wg.ranked_tiles(ffn2, sms=132)
    assert [t.describe() for t in everything[:3]] == ["128x32x4", "64x32x2", "128x32x2"]
    assert "128x64x8" in [t.describe() for t in everything]
    assert all(wg.tile_reason(ffn2, t) is None for t in ranked + everything)
    # no tile has more rows than A's 64-row blocks
    assert {t.block_m for t in wg.ranked_tiles(gemm_of(64, 72, 1000), sms=132)} == {64}
    waves = [wg.waves_of(ffn2, t, 132) > 1 for t in ranked]
    assert waves == sorted(waves)
    # FFN1 keeps 64 columns (CUTLASS's narrow tiles do not pay there): its one-wave tiles first
    assert [t.describe() for t in wg.ranked_tiles(gemm_of(128, 3072, 768), sms=132, block_ms=(64,))[:2]] == ["64x64x1", "64x48x1"]


def test_waves_count_the_clusters_that_run_at_once():
    """A CTA takes a multiprocessor; a cluster runs inside one GPC, so on the H100 (132 SMs)
    clusters of four or eight run 120 CTAs at once (bench/cluster_capacity.cu), pairs 132."""
    ffn2 = gemm_of(128, 768, 3072)
    assert [wg.waves_of(ffn2, wg.SplitTile(*tile), 132) for tile in ((64, 32, 2), (64, 48, 4), (128, 48, 8), (64, 48, 8))] == [
        1, 2, 2, 3]  # 96 CTAs in pairs; 128 in clusters of four and of eight; 256 in eights
    assert wg.waves_of(gemm_of(128, 3072, 768), wg.SplitTile(64, 48, 1), 132) == 1  # FFN1: 128 single CTAs


@pytest.mark.parametrize("m, n, k, reason", [
    (128, 768, 3072, None),  # BERT b1's FFN2: K = 4 N
    (197, 768, 3072, None),
    (128, 3072, 768, "K = 768 is under 4 × N = 12288: CUTLASS's tiles are faster"),
    (128, 768, 768, "K = 768 is under 4 × N = 3072: CUTLASS's tiles are faster"),
])
def test_the_heuristic_gives_it_only_long_reductions(m, n, k, reason):
    assert wg.payoff_reason(gemm_of(m, n, k)) == reason


# ------------------------------------------------------------------ the instance


def test_the_instance_bakes_the_problem_and_takes_the_gemm_abi():
    op = marked(BERT_FFN2, wg.SplitTile(64, 64, 4))
    source = wg.emit_instance(op).source
    for text in ("constexpr int M = 128, N = 768, K = 3072;", "BM = 64, BN = 64, BK = 64, CTAS = 4, SPLIT = 3, STAGES = 4;",
                 "__cluster_dims__(CTAS, 1, 1)", "using ClusterShape = Shape<Int<CTAS>, _1, _1>;",
                 "cutlass::layout::RowMajor, 8, float, TileShape", "KernelTmaWarpSpecializedPingpong",
                 "x = x + residual;",
                 "T const *row = params.residual + static_cast<size_t>(m) * N;",
                 "residual[j] = *reinterpret_cast<uint32_t const *>(row + n);",
                 "bias[j] = *reinterpret_cast<uint32_t const *>(params.bias + n);",
                 "int batch,\n                          int m, int n, int k, void *workspace",
                 "if (batch != 1 || m != 128 || n != 768 || k != 3072) return 2002;",
                 "boltir_pdl::launch(kernel, dim3(TILES_N * CTAS, TILES_M), kThreads, SHARED_BYTES, stream, params);"):
        assert text in source, text
    col = wg.emit_instance(marked(gemm_text(128, 768, 3072), wg.SplitTile(64, 32, 1))).source
    assert "cutlass::layout::ColumnMajor, 8, float, TileShape" in col
    assert "__cluster_dims__" not in col and "CTAS = 1, SPLIT = 4" in col  # one CTA: no cluster
    assert wg.kernel_arch(op) == "sm90" and wg.launch_arguments(op).problem == (1, 128, 768, 3072)


def test_the_kernel_prefetches_its_weight_waits_and_reduces_in_cluster_and_group_order():
    source = wg.emit_instance(marked(BERT_FFN2, wg.SplitTile(64, 64, 4))).source
    body = source[source.index("kernel(CUTLASS_GRID_CONSTANT"):]
    first = body.split("{", 1)[1].strip().splitlines()[0].strip()
    assert first.startswith("boltir_pdl::prefetch_share(params.prefetch, WEIGHT_BYTES);")  # a hint, before the wait
    # the set-up (barriers, TMA descriptors) overlaps the grid before; the wait comes before any load
    assert (body.index("init_barriers") < body.index("prefetch_tma_descriptors") < body.index("sync_cluster<true>();")
            < body.index("boltir_pdl::enter();") < body.index("collective.load(")
            < body.index("each_pair(load_operands);") < body.index("collective.mma("))
    # bias and residual (the grids before may have written it) are loaded once the wait is
    # over, by the consumer groups before their mainloop, so that their latency passes there
    assert body.index("boltir_pdl::enter();") < body.index("each_pair(load_operands);")
    assert body.index("auto load_operands = [&](int p, int j) {") < body.index("params.bias[") < body.index(
        "each_pair(load_operands);")
    assert "boltir_pdl::prefetch_weights() && WEIGHT_BYTES <= 16777216ull" in source
    # a cluster's CTA first adds its groups' partials in its own shared memory (every load
    # before the first store, in group order), behind a barrier of its consumer groups: the
    # cluster then carries one partial a CTA
    presum = body.index('asm volatile("bar.sync 1, %0;" ::"n"(128 * SPLIT) : "memory");')
    assert body.index("collective.mma_tail") < presum
    added = body.index("sums[j][e] += partial_tile(storage, group)[(2 * (j * SPLIT + ring) + e) * 128 + thread];")
    assert "for (int group = 0; group < SPLIT; ++group) {  // in group order: deterministic" in body
    # each sum goes to the CTA that finishes its pair, stored into that CTA's shared memory
    # (st.async, completing its bytes on the CTA's barrier: no load across the cluster)
    pushed = body.index("push_pair(sums[j][0], sums[j][1], &storage.received[cta][q / RUNS * SPLIT + ring][thread], "
                        "&storage.arrived,\n                      q % RUNS / SPLIT);")
    assert presum < added < pushed
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32" in source
    assert "map_shared_rank" not in source and "ld.shared::cluster" not in source
    # the CTA expects every CTA's sums of its pairs (after the grid wait), waits for their
    # bytes, then reads them from its own shared memory, CTA by CTA
    expected = body.index("arrive_and_expect_tx(&storage.arrived, CTAS * owned_pairs(cta) * 128 * sizeof(float2));")
    assert body.index("boltir_pdl::enter();") < expected < presum
    waited = body.index("if (warp_group > 0) cutlass::arch::ClusterBarrier::wait(&storage.arrived, 0);")
    assert pushed < body.index("cute::cluster_arrive_relaxed();") < waited
    read = body.index("float2 const sum = storage.received[source][j * SPLIT + ring][thread];")
    assert waited < read < body.index("each_pair(load_partials);")
    assert "ClusterBarrier::init(&storage.arrived, 1);" in body
    assert "float2 received[CTAS][SHARE * SPLIT][128];" in source
    # every load of the epilogue is issued before any value loaded is used: the partials
    # in one pass, the sums, conversions and stores in the next
    assert body.index("each_pair(load_partials);") < body.index("each_pair(finish_pair);")
    assert body.index("sums[e] += partials[j][source][e];") < body.index("Pair const b = unpack(bias[j]), r = unpack(residual[j]);")
    assert body.index("unpack(bias[j])") < body.index("T *row = params.output")
    # fixed order, CTA by CTA (each CTA's sum; in one CTA, group by group): deterministic
    assert "constexpr int SOURCES = CTAS > 1 ? CTAS : SPLIT;" in body
    assert "for (int source = 0; source < SOURCES; ++source) {  // fixed order, CTA by CTA: deterministic" in body
    # every thread reaches every barrier; no CTA leaves while its stores into a peer may be
    # in flight (the arrival after them, the wait last)
    assert "return;" not in body and body.count("sync_cluster") == 1
    assert body.rindex("cute::cluster_wait();") > body.index("each_pair(finish_pair);")
    # one CTA: its groups' partial tiles in its own shared memory, a CTA barrier, no cluster
    one = wg.emit_instance(marked(BERT_FFN2, wg.SplitTile(64, 32, 1))).source
    one_body = one[one.index("kernel(CUTLASS_GRID_CONSTANT"):]
    assert "partials[j][source][e] = partial_tile(storage, source)[(2 * p + e) * 128 + thread];" in one_body
    assert "sync_cluster();  // every group's partial tile in place" in one_body
    assert "push_pair" not in one and "received" not in one and "bar.sync 1" not in one_body


def test_a_cluster_ctas_received_sums_fit_beside_its_rings():
    # 64 x 32 on two CTAs of four groups: 8 pairs, one a unit; 2 CTAs x 4 pairs x 1 KB
    assert wg.received_bytes(64, 32, 4, 2) == 2 * 4 * 1024 + 8
    assert wg.received_bytes(64, 32, 4, 1) == 0
    # 128 x 64 on eight CTAs of two groups: 32 pairs, two a unit: 8 x 4 KB, beside four stages a ring
    assert wg.received_bytes(128, 64, 2, 8) == 8 * 4 * 1024 + 8
    assert wg.most_stages(128, 64, 2, 8) == wg.most_stages(128, 64, 2) == 4
    # on two CTAs of three groups: 18 pairs a CTA from each, 36 KB, which costs a stage
    assert wg.received_bytes(128, 64, 3, 2) == 2 * 18 * 1024 + 8
    assert (wg.most_stages(128, 64, 3), wg.most_stages(128, 64, 3, 2)) == (3, 2)
    for ctas in wg.CTAS:
        for split in wg.SPLITS:
            stages = wg.most_stages(128, 64, split, ctas)
            assert wg.shared_bytes(128, 64, split, stages, ctas) <= wg.SHARED_LIMIT - 1024


def test_the_epilogue_moves_column_pairs_where_the_rows_and_pointers_allow():
    # accumulators 2p and 2p + 1 are adjacent columns of a row: one 4-byte access each for
    # bias, residual and output where N is even and the pointers 4-byte aligned; else two
    source = wg.emit_instance(marked(BERT_FFN2, wg.SplitTile(64, 32, 2))).source
    assert "struct alignas(4) Pair {" in source and "PAIRS = kAccumulators / 2" in source
    assert "bool const paired = N % 2 == 0 && params.paired;" in source
    assert "aligned(bias) && aligned(residual) && aligned(d)};" in source
    assert "*reinterpret_cast<Pair *>(row + n) = Pair{" in source
    assert "if (n + 1 < N) row[n + 1] = second;" in source  # odd N, or an unaligned pointer
    assert "bias[j] = pack(n < N ? params.bias[n] : zero, n + 1 < N ? params.bias[n + 1] : zero);" in source


def test_the_epilogue_indexes_its_pairs_with_constants():
    # in one CTA with several pairs a unit, both loops run over every pair under a test
    # uniform over the warp group, so that each pair's coordinates fold to constants; with
    # one pair a unit or a cluster, the unit gives the index; whole tiles drop bounds tests
    source = wg.emit_instance(marked(BERT_FFN2, wg.SplitTile(64, 32, 2))).source
    body = source[source.index("kernel(CUTLASS_GRID_CONSTANT"):]
    # one visitor gives every pass over the pairs (operands, partials, results) the same form
    visitor = body[body.index("auto each_pair = [&](auto &&visit) {"):body.index("uint32_t bias[SHARE], residual[SHARE];")]
    assert visitor.count("for (int p = 0; p < PAIRS; ++p) {") == 1 and "if (p % RUNS == unit) visit(p, p / RUNS);" in visitor
    runtime = visitor.index("if constexpr (SHARE == 1 || CTAS > 1) {")
    assert runtime < visitor.index("if (j * RUNS + unit < PAIRS) visit(j * RUNS + unit, j);") < visitor.index(
        "if (p % RUNS == unit) visit(p, p / RUNS);")
    assert [line.strip() for line in body.splitlines() if line.strip().startswith("each_pair(")] == [
        "each_pair(load_operands);", "each_pair(load_partials);", "each_pair(finish_pair);"]
    assert "constexpr bool WHOLE_ROWS = M % BM == 0, WHOLE_COLUMNS = N % BN == 0;" in body
    assert "if (WHOLE_ROWS || m < M) {" in body and body.count("paired && (WHOLE_COLUMNS || n < N)") == 3


def test_only_the_bench_trace_records_phases(monkeypatch):
    # builds never trace: the default instance has no records and no copy-out entry
    op = marked(BERT_FFN2, wg.SplitTile(64, 32, 2))
    plain = wg.emit_instance(op).source
    assert "trace" not in plain
    monkeypatch.setattr(wg, "TRACE_PHASES", True)
    traced = wg.emit_instance(op).source
    body = traced[traced.index("kernel(CUTLASS_GRID_CONSTANT"):]
    assert "__device__ unsigned long long trace_buffer[TILES_M * TILES_N * CTAS][2 * TRACE_SLOTS];" in traced
    assert f'extern "C" int {wg.kernel_name(op)}_trace(void *host, size_t bytes)' in traced
    # eleven points in order: entry after the prefetch hint, the barriers initialized, the
    # CTA (cluster) synchronized, set-up after the grid wait, the mainloop around
    # collective.mma (the first k-tile's arrival just before it), the partials' barrier, the
    # stores, the exit barrier; as many as bench.trace_wgsplit reads
    from bench import trace_wgsplit

    assert f"constexpr int TRACE_SLOTS = {trace_wgsplit.SLOTS};" in traced
    points = [body.index(f"trace_phase({slot})") for slot in (0, 9, 10, 1, 2)]
    assert body.index("prefetch_share") < points[0] < body.index("init_barriers") < points[1]
    assert points[1] < body.index("sync_cluster<true>();") < points[2] < body.index("boltir_pdl::enter();") < points[3] < points[4]
    assert points[2] < body.index("pipeline.consumer_wait(read);") < body.index("trace_phase(8)") < body.index("collective.mma(")
    assert body.index("collective.mma(") < body.index("trace_phase(ring == 0 ? 3 : 4)")
    assert (body.index("cutlass::arch::ClusterBarrier::wait(&storage.arrived, 0);") < body.index("trace_phase(5)")
            < body.index("T *row = params.output") < body.index("trace_phase(6)") < body.index("trace_phase(7)"))
    # apart from the records the kernel is the same
    stripped = "\n".join(line for line in traced.splitlines() if "trace" not in line.lower() and "TRACE" not in line)
    assert "boltir_pdl::launch(kernel" in stripped and stripped.count("sync_cluster") == plain.count("sync_cluster")


def test_a_128_row_tile_is_one_warp_groups_two_row_blocks():
    source = wg.emit_instance(marked(BERT_FFN2, wg.SplitTile(128, 64, 8))).source
    for text in ("BM = 128, BN = 64, BK = 64, CTAS = 8, SPLIT = 2, STAGES = 4;", "using TileShape = Shape<Int<BM>, Int<BN>, _64>;",
                 "constexpr int TILES_M = (M + BM - 1) / BM", "__cluster_dims__(CTAS, 1, 1)"):
        assert text in source, text


def test_one_instance_per_distinct_tile_and_problem():
    first, same = marked(BERT_FFN2, wg.SplitTile(64, 64, 4)), marked(BERT_FFN2, wg.SplitTile(64, 64, 4))
    other = marked(BERT_FFN2, wg.SplitTile(64, 64, 2))
    assert wg.kernel_name(first) == wg.kernel_name(same) != wg.kernel_name(other)
    assert wg.emit_translation_unit([first, same, other]).count("extern \"C\" int boltir_wgsplit_gemm_") == 2


def test_a_choice_it_cannot_run_is_one_line():
    op = marked(gemm_text(512, 768, 768), wg.SplitTile(64, 32, 1))
    with pytest.raises(BoltError) as error:
        wg.emit_instance(op)
    assert error.value.message == "no wgsplit_gemm kernel for op.gemm: 512 rows of A: the kernel takes at most 256"


def test_it_is_a_tiled_family_whose_op_stays_at_the_op_level(rng):
    module = parse_module(BERT_FFN2)
    mark(the_gemm(module), wg, wg.SplitTile(64, 64, 4), "sm90")
    after = assert_equivalent(module, LowerOpToCutlassPass(), rng)
    assert tiled_families.BY_FAMILY[wg.FAMILY] is wg
    assert wg.computes(the_gemm(after))


# ------------------------------------------------------------------ the tuner


def test_the_tuner_races_its_tiles_for_few_rows_only():
    found = candidates(gemm_of(128, 768, 3072), "sm90", 132, 3).choices
    ours = [c for c in found if c.family == wg.FAMILY]
    assert 2 <= len(ours) <= MAX_WGSPLIT and found[0] == ours[0]  # the heuristic's choice first
    assert any(c.family == "gemm" for c in found)
    assert describe_choice(ours[0]) == "wgsplit 64x32x2"
    ranked = [t for t in wg.ranked_tiles(gemm_of(128, 768, 3072), 132) if t != wg.SplitTile.of(ours[0].tile)]
    assert [wg.SplitTile.of(c.tile) for c in ours[1:]] == ranked[:len(ours) - 1]
    # 48 columns are raced (one-wave ones: 128 x 48 on a quarter of K); the heuristic never gives them
    assert "wgsplit 128x48x4" in [describe_choice(c) for c in ours] and "wgsplit 64x48x4" not in map(describe_choice, ours)
    assert 48 in wg.BLOCK_N and 48 not in wg.DEFAULT_SHAPES["block_n"]
    assert any(wg.SplitTile.of(c.tile).block_m == 128 for c in ours)
    assert not any(c.family == wg.FAMILY for c in candidates(gemm_of(4096, 768, 768), "sm90", 132, 3).choices)
    assert not any(c.family == wg.FAMILY for c in candidates(gemm_of(128, 768, 3072), "sm80", 108, 2).choices)
    assert wg.cutlass_sm90.SMALL_M_ROWS == cutlass_sm90.SMALL_M_ROWS


@pytest.mark.slow
def test_the_unit_compiles_with_nvcc_for_sm90a(tmp_path):
    op_list = [marked(BERT_FFN2, wg.SplitTile(64, 64, 4)), marked(BERT_FFN2, wg.SplitTile(128, 64, 8)),
               marked(gemm_text(197, 768, 3072, element="bf16", epilogue="bias, gelu"), wg.SplitTile(64, 32, 1))]
    assert_unit_compiles(wg, op_list, tmp_path, SM90A)


def test_select_kernels_split_gemms_gives_it_the_few_row_gemms():
    """split_gemms=wgsplit (the default): GEMMs of at most 256 rows on sm90 with a long K get
    the default tile (the skinny kernel keeps its batch-1 classifiers, CUTLASS the shorter
    reductions); split_gemms=cutlass leaves them all to CUTLASS; the tuner then starts from
    ours and races CUTLASS's beside it."""
    from boltir.backends.cuda.select.heuristic import HeuristicSelector

    ffn2, classifier = gemm_of(128, 768, 3072), gemm_of(1, 1000, 2048)
    chosen = HeuristicSelector(sms=132, split_gemms=True).select(ffn2, "sm90")
    assert chosen.family == wg.FAMILY and wg.SplitTile.of(chosen.tile) == wg.default_tile(ffn2, 132)
    assert HeuristicSelector(sms=132, split_gemms=True).select(classifier, "sm90").family == "skinny_gemm"
    assert HeuristicSelector(sms=132, split_gemms=True).select(gemm_of(128, 768, 768), "sm90").family == "gemm"
    assert HeuristicSelector(sms=132).select(ffn2, "sm90") == chosen
    assert HeuristicSelector(sms=132, split_gemms=False).select(ffn2, "sm90").family == "gemm"
    found = candidates(ffn2, "sm90", heuristic=HeuristicSelector(sms=132, split_gemms=True)).choices
    assert found[0] == chosen and any(c.family == "gemm" for c in found)


def test_an_unknown_split_gemms_kernel_is_one_line():
    from boltir.backends.cuda.passes.select_kernels import make_selector

    with pytest.raises(BoltError) as error:
        make_selector("heuristic", split_gemms="streamk")
    assert error.value.message == "split_gemms must be one of cutlass, wgsplit; got 'streamk'"
