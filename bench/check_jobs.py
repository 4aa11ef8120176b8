"""The compile jobs a check script's build makes: `python -m MODULE ARGS --build-only` run in
this process, with the toolchain's cache-key function recording each job it is asked about
(every unit the build looks up in the object cache, compiled or not).

    jobs = check_jobs("bench.check_attention --only s512 --kernels overlap_q4")   # {cache key: CompileJob}

bench/carry_objects.py keeps those objects for a GPU call (`--check`); bench/kernel_resources.py
asks ptxas what their kernels use."""

from __future__ import annotations

import runpy
import shlex
import sys


def check_jobs(command: str) -> dict:
    """{object-cache key: CompileJob} of the build of `command` ("MODULE ARGS"); a build that
    fails, or a module that is not there, ends the program with one line."""
    from boltir.backends.cuda.toolchain import nvcc

    module, *arguments = shlex.split(command)
    jobs: dict = {}
    original = nvcc.Toolchain.object_key

    def recording(toolchain, job):
        key = original(toolchain, job)
        jobs[key] = job
        return key

    saved = sys.argv
    nvcc.Toolchain.object_key = recording
    sys.argv = [module, *arguments, "--build-only"]
    try:
        runpy.run_module(module, run_name="__main__")
    except SystemExit as done:
        if done.code not in (0, None):
            raise SystemExit(f"--check {command!r}: its --build-only exited with {done.code}") from None
    except Exception as error:  # noqa: BLE001 - the script's failure, in one line (a missing module among them)
        raise SystemExit(f"--check {command!r}: {(str(error) or type(error).__name__).splitlines()[0]}") from None
    finally:
        nvcc.Toolchain.object_key = original
        sys.argv = saved
    return jobs
