"""Bucketed builds (issue 19): the range syntax and its errors, the bucket choice, padding
and slicing through the interpreter (a CNN on its batch, a BERT layer on its sequence),
a model that mixes rows refused, and one build with its manifest, its kernels shared
across buckets and compiled once (fake nvcc)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boltir.buckets import (
    compile_buckets,
    lower_buckets,
    run_interpreted,
    split_pipeline,
)
from boltir.diagnostics import BoltError
from boltir.frontends.onnx import import_model
from boltir.interp import run
from boltir.shape_ranges import (
    DimRange,
    bucket_inputs,
    bucket_plan,
    default_buckets,
    parse_input_shape,
    slice_to,
)
from tests.backends.test_nvcc import cache_dir, fake_cutlass, fake_nvcc  # noqa: F401 - fixtures
from tests.support.bucket_models import bert_layer, small_cnn
from tests.support.cli import error_of

NO_DB = "/nonexistent/boltir-bucket-tests.sqlite"

# ------------------------------------------------------------------ the syntax


def test_a_range_in_input_shape():
    assert parse_input_shape("data=1..64x3x224x224") == ("data", (DimRange(1, 64), 3, 224, 224))
    assert parse_input_shape("ids=8x32..512") == ("ids", (8, DimRange(32, 512)))


@pytest.mark.parametrize("text, message", [
    ("data=64..1x3", "input 'data' dimension 0 has the range 64..1, whose low end is above its high end"),
    ("data=0..8x3", "input 'data' dimension 0 has the range 0..8; a range starts at 1 or above"),
    ("data=1x..8", "input 'data' dimension 1 is '..8', not a size (64) or a range (1..64)"),
    ("data=1xax3", "input 'data' dimension 1 is 'a', not a size (64) or a range (1..64)"),
    ("1..8x3", "is not NAME=DIMS"),
])
def test_range_syntax_errors_name_input_and_dimension(text, message):
    with pytest.raises(BoltError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        parse_input_shape(text)


@pytest.mark.parametrize("shapes, buckets, message", [
    ({"data": ((8, 1), 3)}, None, "input_shapes: input 'data' dimension 0 has the range 8..1"),
    ({"data": ((1, 2, 3), 3)}, None, r"input 'data' dimension 0 is \(1, 2, 3\); a range is a pair of sizes"),
    ({"data": (-1, 3)}, None, "input 'data' dimension 0 is -1"),
    ({"data": (4, 3)}, None, "buckets need an input dimension given as a range"),
    ({"data": ((1, 64), 3)}, {"data:1": (1, 2)}, "names input 'data' dimension 1, which is not a range"),
    ({"data": ((1, 64), 3)}, {"image:0": (1, 64)}, "names input 'image', which has no --input-shape with a range"),
    ({"data": ((1, 64), 3)}, {"data:0": (1, 128)}, "input 'data' dimension 0 has the bucket 128, outside its range 1..64"),
    ({"data": ((1, 64), 3)}, {"data:0": (1, 2, 32)}, "largest bucket is 32, below its range's maximum 64: sizes 33..64"),
    ({"data": ((1, 64), 3)}, ["data:0=1,x"], "input 'data' dimension 0 has sizes '1,x', not integers"),
    ({"data": ((1, 64), 3)}, ["data=1,2"], "is not NAME:DIM=SIZES"),
])
def test_plan_errors_name_input_and_dimension(shapes, buckets, message):
    with pytest.raises(BoltError, match=message):
        bucket_plan(shapes, buckets)


def test_boltc_range_errors_are_one_line(capsys, tmp_path):
    model = tmp_path / "cnn.onnx"
    model.write_bytes(small_cnn().SerializeToString())
    assert "has the range 9..2" in error_of(capsys, [str(model), "-o", str(tmp_path / "out"), "--input-shape",
                                                      "image=9..2x3x16x16"])
    assert "input ranges compile one model per bucket into a directory" in error_of(
        capsys, [str(model), "--emit", "op", "--input-shape", "image=1..4x3x16x16"])
    assert "names input 'image' dimension 1, which is not a range" in error_of(
        capsys, [str(model), "-o", str(tmp_path / "out"), "--input-shape", "image=1..4x3x16x16", "--buckets", "image:1=3"])


# ---------------------------------------------------------- the bucket choice


def test_default_buckets_are_the_powers_of_two_and_the_maximum():
    assert default_buckets(DimRange(1, 64)) == (1, 2, 4, 8, 16, 32, 64)
    assert default_buckets(DimRange(3, 100)) == (4, 8, 16, 32, 64, 100)
    assert default_buckets(DimRange(5, 7)) == (7,)


def test_a_call_runs_the_smallest_bucket_that_holds_it():
    plan = bucket_plan({"data": ((1, 64), 3)})
    sizes = [bucket.sizes[0] for bucket in plan.buckets]
    assert sizes == [1, 2, 4, 8, 16, 32, 64]
    for n, expected in [(1, 1), (3, 4), (24, 32), (32, 32), (33, 64), (64, 64)]:
        bucket, call = plan.choose({"data": (n, 3)})
        assert (bucket.sizes, call) == ((expected,), (n,))
    with pytest.raises(BoltError, match="input 'data' dimension 0 is 65, outside its range 1..64"):
        plan.choose({"data": (65, 3)})


def test_dimensions_with_the_same_axis_and_range_are_sized_together():
    plan = bucket_plan({"ids": (8, (32, 512)), "mask": (8, (32, 512))}, ["ids:1=32,128,512"])
    assert len(plan.symbols) == 1 and plan.symbols[0].sizes == (32, 128, 512)
    bucket, _ = plan.choose({"ids": (8, 100), "mask": (8, 100)})
    assert bucket.shapes == {"ids": (8, 128), "mask": (8, 128)}
    with pytest.raises(BoltError, match="dimensions ids:1,mask:1 share one size, got 100, 101"):
        plan.choose({"ids": (8, 100), "mask": (8, 101)})
    both = bucket_plan({"x": ((1, 4), (16, 32))})
    assert [b.sizes for b in both.buckets] == [(1, 16), (1, 32), (2, 16), (2, 32), (4, 16), (4, 32)]


def test_calls_are_checked_against_the_interface():
    plan = bucket_plan({"data": ((1, 8), 3)})
    with pytest.raises(BoltError, match=r"input 'data' dimension 1 must be 3 \(1..8x3\), got 4"):
        bucket_inputs(plan, {"data": np.zeros((2, 4))})
    with pytest.raises(BoltError, match="missing input 'data'"):
        bucket_inputs(plan, {})
    with pytest.raises(BoltError, match="unknown input 'image'"):
        bucket_inputs(plan, {"image": np.zeros((2, 3)), "data": np.zeros((2, 3))})


def test_an_exact_size_call_pads_and_slices_nothing():
    plan = bucket_plan({"data": ((1, 8), 3)})
    array = np.ones((4, 3), np.float32)
    index, padded, sizes = bucket_inputs(plan, {"data": array})
    assert plan.buckets[index].sizes == (4,) and padded["data"] is array and sizes == (4,)
    assert slice_to(array, {0: 4}) is array
    _, padded, _ = bucket_inputs(plan, {"data": array[:3]})
    assert padded["data"].shape == (4, 3) and not padded["data"][3].any()


# ------------------------------------------------- padding through the interpreter


def test_a_cnn_padded_along_its_batch_computes_each_row_as_alone():
    model = small_cnn()
    lowering = lower_buckets(model, input_shapes={"image": ((1, 8), 3, 16, 16)}, dtype="f32", tuning_db=NO_DB)
    assert [b.bucket.sizes for b in lowering.buckets] == [(1,), (2,), (4,), (8,)]
    assert lowering.buckets[-1].axes.outputs == [{0: 0}] and "conv2d x2" in lowering.buckets[-1].axes.why()
    rng = np.random.default_rng(0)
    for n in (1, 3, 5, 8):
        image = rng.standard_normal((n, 3, 16, 16)).astype(np.float32)
        (expected,) = run(import_model(model, {"image": image.shape}), {"image": image})
        for level in ("op", "final"):
            (got,) = run_interpreted(lowering, {"image": image}, level=level)
            assert got.shape == (n, 10)
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def bert_models(tmp_path_factory):
    pytest.importorskip("torch")
    directory = tmp_path_factory.mktemp("bert")
    return bert_layer(directory / "plain.onnx"), bert_layer(directory / "masked.onnx", with_mask=True)


@pytest.mark.parametrize("masked", [False, True])
def test_a_bert_layer_padded_along_its_sequence_masks_the_padded_keys(bert_models, masked):
    path = bert_models[masked]
    shapes = {"x": (2, (4, 16), 64)} | ({"attention_mask": (2, (4, 16))} if masked else {})
    lowering = lower_buckets(path, input_shapes=shapes, dtype="f32", tuning_db=NO_DB)
    assert all(b.key_symbol == 0 for b in lowering.buckets)
    assert "mask-padded-keys" in lowering.buckets[0].lowered.pipeline
    rng = np.random.default_rng(1)
    for n in (5, 8, 11):
        inputs = {"x": rng.standard_normal((2, n, 64)).astype(np.float32)}
        if masked:
            inputs["attention_mask"] = (np.arange(n)[None, :] < np.array([[n], [n - 2]])).astype(np.float32)
        (expected,) = run(import_model(path, {k: v.shape for k, v in inputs.items()}), inputs)
        (got,) = run_interpreted(lowering, inputs)
        assert got.shape == (2, n, 64)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_a_model_that_mixes_rows_is_refused_naming_the_op():
    with pytest.raises(BoltError, match=r"graph.reduce_mean 'batch_mean' mixes the bucketed dimension image:0: "
                                        r"it combines positions along its reduced axis 0"):
        lower_buckets(small_cnn(rows_mixed=True), input_shapes={"image": ((1, 8), 3, 16, 16)}, dtype="f32",
                      tuning_db=NO_DB)


def test_the_pipeline_splits_at_lower_graph_to_op():
    assert split_pipeline('a,b{x="1,2" y=3},lower-graph-to-op,c{z=1}') == ('a,b{x="1,2" y=3}', "c{z=1}")
    with pytest.raises(BoltError, match="the pipeline has no lower-graph-to-op"):
        split_pipeline("canonicalize")


# --------------------------------------------------- one build, kernels once


def test_one_build_holds_every_bucket_and_compiles_each_kernel_once(fake_nvcc, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    result = compile_buckets(small_cnn(), out, input_shapes={"image": ((1, 8), 3, 16, 16)}, arch="sm80",
                             tuning_db=NO_DB, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == result.manifest
    assert manifest["inputs"] == [{"name": "image", "shape": ["1..8", 3, 16, 16], "dtype": "f32"}]
    assert manifest["outputs"] == [{"name": "logits", "shape": ["1..8", 10], "dtype": "f32"}]
    assert manifest["symbols"] == [{"dims": ["image:0"], "range": [1, 8], "sizes": [1, 2, 4, 8]}]
    assert [b["inputs"] for b in manifest["buckets"]] == [{"image": [n, 3, 16, 16]} for n in (1, 2, 4, 8)]
    assert [b["outputs"] for b in manifest["buckets"]] == [{"logits": [n, 10]} for n in (1, 2, 4, 8)]
    assert all(b["launches"] and b["output_axes"] == {"logits": {"0": 0}} for b in manifest["buckets"])
    assert manifest["arena_bytes"] == max(b["arena_bytes"] for b in manifest["buckets"])
    assert (out / "weights.bin").stat().st_size == manifest["weights_bytes"]
    assert all((out / f"module_b{i}.mlir").is_file() for i in range(4)) and (out / "libmodel.so").is_file()
    # the weights once: the image is no larger than one bucket's own
    single = lower_buckets(small_cnn(), input_shapes={"image": ((1, 1), 3, 16, 16)}, arch="sm80", tuning_db=NO_DB)
    from boltir.backends.cuda.codegen.host_program import build_program

    assert manifest["weights_bytes"] <= len(build_program(single.buckets[0].lowered.module).weights) + 4 * 256
    # every distinct kernel compiled once, and one host unit for all buckets
    compiles = fake_nvcc.compile_calls()
    kernels = {launch["kernel"] for b in manifest["buckets"] for launch in b["launches"]}
    sources = [call.split(" -c ")[1].split()[0] for call in compiles]
    assert len(compiles) == len(kernels) + 1
    assert len({Path(s).name for s in sources}) == len(sources)
    source = "\n".join(Path(s).read_text() for s in sources if Path(s).exists())
    assert source == "" or source.count("boltir_bucket_graph_run") <= 1
    # building again compiles nothing: the buckets' kernels are in the object cache
    compile_buckets(small_cnn(), tmp_path / "again", input_shapes={"image": ((1, 8), 3, 16, 16)}, arch="sm80",
                    tuning_db=NO_DB, progress=False)
    assert len(fake_nvcc.compile_calls()) == len(compiles)
    library = (out / "libmodel.so").read_text()
    assert library.count("boltir_bucket_graph_run(void *ctx_, int bucket") == 1
    assert library.count("namespace bucket3 {") == 1 and "namespace bucket4 {" not in library


def test_the_host_unit_has_an_entry_point_per_bucket_and_one_weights_image(fake_nvcc, tmp_path):  # noqa: F811
    from boltir.backends.cuda.codegen.bucket_program import build_bucketed_program

    lowering = lower_buckets(small_cnn(), input_shapes={"image": ((1, 4), 3, 16, 16)}, arch="sm80", tuning_db=NO_DB)
    modules = [b.lowered.module for b in lowering.buckets]
    program = build_bucketed_program(modules, ["b1", "b2", "b4"])
    host = program.units[-1]
    assert host.name == "host" and [u.name for u in program.units].count("host") == 1
    for index in range(3):
        assert f"namespace bucket{index} {{" in host.source
    assert "constexpr int kBuckets = 3;" in host.source
    assert len({u.name for u in program.units}) == len(program.units)
    assert program.arena_bytes == max(b.arena_bytes for b in program.buckets)


def test_a_bucket_graph_launches_on_the_callers_stream():
    """A null stream (torch's legacy default stream) is captured on the context's own
    stream but launched on the caller's: launched on the context's non-blocking stream, the
    graph raced the caller's input copies and output reads (the H200's ResNet-50 buckets
    came out wrong, in 0.1 ms)."""
    from boltir.backends.cuda.codegen.bucket_program import build_bucketed_program

    lowering = lower_buckets(small_cnn(), input_shapes={"image": ((1, 2), 3, 16, 16)}, arch="sm80", tuning_db=NO_DB)
    host = build_bucketed_program([b.lowered.module for b in lowering.buckets], ["b1", "b2"]).units[-1].source
    graph_run = host[host.index("extern \"C\" int boltir_bucket_graph_run"):]
    graph_run = graph_run[:graph_run.index("\n}\n")]
    assert "cudaStream_t capture_stream = stream ? stream : ctx->stream;" in graph_run
    assert "capture(ctx, bucket, inputs, outputs, capture_stream)" in graph_run
    assert "cudaGraphLaunch(slot.exec, stream)" in graph_run
    assert "stream = ctx->stream" not in graph_run.replace("capture_stream = stream ? stream : ctx->stream", "")
