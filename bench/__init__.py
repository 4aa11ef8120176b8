"""The scripts that run on a GPU machine: kernel and model benchmarks, the kernel checks
against the interpreter, the tuner's driver. Run each from the repository root as a module,
`python3 -m bench.NAME` (docs/BENCHMARKING.md); they import boltir and tests.support, never
by editing sys.path. Not part of the installed package."""
