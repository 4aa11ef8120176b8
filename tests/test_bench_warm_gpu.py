"""bench/warm_gpu.py without a GPU: its clock reading says what went wrong in one line, and
gpu_run.sh runs it as the `warm` stage."""

from pathlib import Path

from bench import warm_gpu

ROOT = Path(__file__).resolve().parents[1]


def test_the_clock_reading_without_nvidia_smi_is_one_line(monkeypatch):

    def missing(*args, **kwargs):
        raise FileNotFoundError("nvidia-smi")

    monkeypatch.setattr(warm_gpu.subprocess, "run", missing)
    reading = warm_gpu.sm_clock()
    assert reading.startswith("unknown (nvidia-smi:") and "\n" not in reading


def test_gpu_run_has_the_warm_stage():
    script = (ROOT / "bench" / "gpu_run.sh").read_text()
    assert '[warm]="python3 -m bench.warm_gpu ${WARM_ARGS:-}"' in script
