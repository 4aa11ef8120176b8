"""bench/trace_attention.py without a GPU: its cases reach our attention mainloop, the traced
units carry the events and their launcher's `_trace` (builds' units never do), and the phase
arithmetic on made-up events."""

from __future__ import annotations

from bench import trace_attention
from boltir.backends.cuda.codegen import attention_kernels as ak
from boltir.backends.cuda.codegen import attention_sm90_kernels as sm90


def test_the_cases_run_our_mainloop():
    cases = [case.make() for case in trace_attention.cases()]
    assert cases and all(ak.is_sm90(case.op) and sm90.SCHEDULES[ak.sm90_schedule(case.op)].own_mainloop for case in cases)
    assert not sm90.TRACE_STEPS  # the module's flag stays off until main() sets it


def test_only_traced_units_record_events(monkeypatch):
    case = trace_attention.cases()[0].make()
    plain = ak.emit_translation_unit([case.op])
    assert "#define BOLTIR_ATTENTION_TRACE" not in plain and "_trace(unsigned long long" not in plain
    monkeypatch.setattr(sm90, "TRACE_STEPS", True)
    traced = ak.emit_translation_unit([case.op])
    assert "#define BOLTIR_ATTENTION_TRACE 1" in traced
    assert f'extern "C" int {ak.kernel_name(case.op)}_trace(unsigned long long *out)' in traced
    assert traced.count("BOLTIR_TRACE(k") >= 10  # the events in our mainloop


def test_phases_from_made_up_events():
    # one warp group: two tiles of two key steps, 1 µs a phase unless said
    tile = [(0, "entry"), (1, "q"), (2, "top"), (4, "scores"), (7, "softmax"),  # step 0: S wait 2, softmax 3
            (8, "top"), (9, "scores"), (12, "softmax"), (14, "product"),  # step 1: P·V wait 2
            (16, "last"), (17, "exit")]  # last P·V 4 after the softmax, tail 1
    events = [(t, e) for t, e in tile] + [(t + 20, e) for t, e in tile]  # gap 3
    found = trace_attention.phases([events, []])
    assert found["Q wait"] == [1, 1] and found["S wait"] == [2, 1, 2, 1]
    assert found["softmax"] == [3, 3, 3, 3] and found["P·V wait"] == [2, 2]
    assert found["last P·V"] == [4, 4] and found["tail"] == [1, 1] and found["gap"] == [3]
    assert set(found) <= set(trace_attention.PHASES)


class _Library:
    """A made-up unit's `_trace`: warp group 1 has two events, the rest none."""

    def __init__(self):
        def trace(pointer):
            return self.fill(pointer)

        self.boltir_attention_sm90_x_trace = trace  # a function takes `restype` as ctypes' do

    @staticmethod
    def fill(pointer):
        import ctypes

        import numpy as np

        buffer = np.ctypeslib.as_array(ctypes.cast(pointer.value, ctypes.POINTER(ctypes.c_uint64)),
                                       shape=(trace_attention.GROUPS * (1 + trace_attention.EVENTS),))
        buffer[1] = 2
        start = trace_attention.GROUPS + trace_attention.EVENTS
        buffer[start:start + 2] = [(123_000 << 8) | 1, (125_500 << 8) | 8]
        return 0


def test_a_record_is_the_global_timer_and_the_event():
    groups = trace_attention.read_trace(_Library(), "boltir_attention_sm90_x")
    assert len(groups) == trace_attention.GROUPS and groups[0] == []
    assert groups[1] == [(123.0, "entry"), (125.5, "exit")]  # µs
