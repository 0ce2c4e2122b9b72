"""opbench's Python helpers: `trace_control` (pause and resume `trace`'s recording from inside a
program), `trace_modules` (NVTX ranges named by module path) and `kernels` (kernel_bench from
Python). The tools themselves are opbench's binaries (`trace`, `kernel_bench`, ...)."""

__all__ = ["trace_control", "trace_modules", "kernels"]
