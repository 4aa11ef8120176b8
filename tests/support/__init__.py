"""Helpers that the tests and the GPU scripts in bench/ share, for example op-level modules
of one GEMM, conv or back-to-back op (`op_modules`), numpy <-> torch copies
(`torch_arrays`), and the data-kernel cases with their GPU runner (`data_kernel_cases`).

Import them as `tests.support.<module>` with the repository root on the path: pytest puts
it there, and the bench scripts run as modules (`python3 -m bench.NAME`) from the root."""
