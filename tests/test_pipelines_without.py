"""`boltir.pipelines.without_passes`: a pipeline less some passes, whatever their options;
a name the pipeline lacks is an error (a renamed pass must not leave a build silently whole)."""

import pytest

from boltir.compiler import full_pipeline
from boltir.diagnostics import BoltError
from boltir.pipelines import available_passes, parse_pipeline_spec, without_passes


def test_leaves_out_a_pass_with_its_options_and_keeps_the_rest_parseable():
    pipeline = full_pipeline(arch="sm90")
    assert "fuse-depthwise-pointwise{expand=true sms=132}" in pipeline
    left = without_passes(pipeline, ["fuse-depthwise-pointwise", "fuse-space-to-depth"])
    names = [type(p).name for p in parse_pipeline_spec(left, available_passes())]
    assert names == [type(p).name for p in parse_pipeline_spec(pipeline, available_passes())
                     if type(p).name not in ("fuse-depthwise-pointwise", "fuse-space-to-depth")]
    assert "select-kernels{" in left


def test_a_pass_the_pipeline_lacks_is_an_error():
    with pytest.raises(BoltError, match="the pipeline has no pass 'fuse-nothing' to leave out"):
        without_passes("canonicalize,cse", ["cse", "fuse-nothing"])


def test_a_bad_pipeline_is_a_one_line_error():
    with pytest.raises(BoltError, match="bad pass pipeline"):
        without_passes("canonicalize{", ["canonicalize"])


def test_the_steps_keep_their_text_and_commas_inside_options_do_not_split():
    spec = 'canonicalize,select-kernels{selector="db" arch=sm90},x{names="a,b"},cse'
    assert without_passes(spec, ["cse"]) == 'canonicalize,select-kernels{selector="db" arch=sm90},x{names="a,b"}'
