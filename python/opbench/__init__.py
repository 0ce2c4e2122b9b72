"""opbench's Python helpers: `trace_control` (pause and resume `trace`'s recording from inside a
program), `trace_modules` (NVTX ranges named by module path) and `kernels` (kernel_bench from
Python). The tools themselves are the binaries installed beside this package (`trace`,
`kernel_bench`, `compare`, `summarize`, `dashboard`, `history`, ...); `opbench` (or `python -m
opbench`) lists them and runs any of them by name."""

__all__ = ["trace_control", "trace_modules", "kernels"]
