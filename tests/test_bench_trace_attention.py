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
    assert "boltir::attention_sm90::TracedEpilogue<" in traced and "TracedEpilogue<" not in plain  # the epilogue's
    assert "trace_q(kQLoadStart)" in traced and "Base::load_maybe_q(" in traced  # the Q warp's


def test_phases_from_made_up_events():
    # one warp group: two tiles of two key steps, 1 µs a phase unless said
    tile = [(0, "entry"), (1, "q"), (2, "top"), (4, "scores"), (7, "softmax"),  # step 0: S wait 2, softmax 3
            (8, "top"), (9, "scores"), (12, "softmax"), (14, "product"),  # step 1: P·V wait 2
            (16, "last"), (17, "exit")]  # last P·V 4 after the softmax, tail 1
    # gap 3: the order wait 0.5, the epilogue 2, the next start 0.5
    events = [(t, e) for t, e in tile] + [(17.5, "epilogue"), (19.5, "epilogue done")] + [(t + 20, e) for t, e in tile]
    found = trace_attention.phases([events, []])
    assert found["order wait"] == [0.5] and found["epilogue"] == [2] and found["next start"] == [0.5]
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

        consumers = trace_attention.GROUPS * (1 + trace_attention.EVENTS)
        size = consumers + trace_attention.BLOCKS * (1 + trace_attention.Q_EVENTS)
        buffer = np.ctypeslib.as_array(ctypes.cast(pointer.value, ctypes.POINTER(ctypes.c_uint64)), shape=(size,))
        buffer[1] = 2
        start = trace_attention.GROUPS + trace_attention.EVENTS
        buffer[start:start + 2] = [(123_000 << 8) | 1, (125_500 << 8) | 8]
        buffer[consumers] = 1  # block 0's Q warp: one event
        buffer[consumers + trace_attention.BLOCKS] = (122_000 << 8) | 2
        return 0


def test_a_record_is_the_global_timer_and_the_event():
    groups, q_blocks = trace_attention.read_trace(_Library(), "boltir_attention_sm90_x")
    assert len(groups) == trace_attention.GROUPS and groups[0] == []
    assert groups[1] == [(123.0, "entry"), (125.5, "exit")]  # µs
    assert len(q_blocks) == trace_attention.BLOCKS and q_blocks[0] == [(122.0, "load issued")] and q_blocks[1] == []


def test_the_q_warp_against_the_warp_groups():
    # block 0: tile 0's loads wait 1 µs for stages, issued at 1; tile 1's wait 0.5, issued at 10.5
    q_blocks = [[(0, "load start"), (1, "load issued"), (10, "load start"), (10.5, "load issued")]]
    wg0 = [(2, "entry"), (3, "q"), (12, "entry"), (12.5, "q")]  # entered after the issue: 1 and 1.5 µs
    wg1 = [(0.5, "entry"), (2, "q"), (10, "entry"), (11, "q")]  # entered before it: -0.5 µs
    found = trace_attention.q_phases([wg0, wg1], q_blocks)
    assert found["Q stage wait"] == [1, 0.5]
    assert sorted(found["Q issue to entry"]) == [-0.5, -0.5, 1, 1.5]
    assert sorted(found["Q issue to ready"]) == [0.5, 1, 2, 2]
