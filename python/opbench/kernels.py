"""opbench.kernels: kernel_bench from Python, for people coming from PyCUDA.

A thin layer over the `kernel_bench` binary: it writes a manifest (TOML) for the kernels and
buffers you describe, runs kernel_bench, and returns the rows it measured (or, with
device="cpu", the points it would launch). Every check, timing and profile is kernel_bench's.

    from opbench.kernels import load_kernel, buffer, benchmark

    k1 = load_kernel("layernorm_forward.cu", "layernorm_forward_kernel1", block=[128, 256],
                     grid="ceil_div(N, block_x)")
    k3 = load_kernel("layernorm_forward.cu", "layernorm_forward_kernel3", block=256,
                     grid="ceil_div(N * 32, block_x)")
    rows = benchmark(
        [k1, k3],
        buffers=[buffer("out", "f32", "N * C", "output"), buffer("mean", "f32", "N", "output"),
                 buffer("rstd", "f32", "N", "output"), buffer("inp", "f32", "N * C", "input"),
                 buffer("weight", "f32", "C", "input"), buffer("bias", "f32", "C", "input")],
        args=["out", "mean", "rstd", "inp", "weight", "bias", "N", "C"],
        N=[8192], C=[768, 1600], compiler="nvcc")

The binary is $OPBENCH_KERNEL_BENCH, else target/release/kernel_bench of this checkout, else the
one pip installed with this package, else `kernel_bench` on PATH. docs/notes/kernels.md describes every manifest field.
"""

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

from ._tools import tool_command


Block = Union[int, Sequence[int]]


@dataclass
class Kernel:
    """One kernel of a .cu file, named as written there, with its launch shape."""

    source: Path
    name: str
    blocks: List[List[int]]
    grid: Optional[List[Union[int, str]]] = None
    shared_bytes: Optional[Union[int, str]] = None
    args: Optional[List[str]] = None


def _blocks(block: Union[Block, Sequence[Block]]) -> List[List[int]]:
    """256 -> [[256]]; (16, 16) -> [[16, 16]]; [128, 256] -> [[128], [256]]; [(16, 16)] kept."""
    if isinstance(block, int):
        return [[block]]
    items = list(block)
    if items and all(isinstance(b, int) for b in items):
        # A tuple is one shape; a list of ints is a list of 1-D shapes.
        return [items] if isinstance(block, tuple) else [[b] for b in items]
    return [[b] if isinstance(b, int) else list(b) for b in items]


def load_kernel(file, name: str, block: Union[Block, Sequence[Block]] = 256,
                grid=None, shared_bytes=None, args: Optional[List[str]] = None) -> Kernel:
    """A kernel of `file` (a .cu file as it is: C++ names, templates and host code are fine).

    name: as written in the source: "my_kernel", "softmax_kernel<256, float>", or an overload
    "scale(float*, int)". block: 256, (16, 16), or a list of shapes to sweep. grid: a list of
    1 to 3 expressions of the parameters and block_x/block_y/block_z/threads (e.g.
    ["ceil_div(N, block_x)"]); a single value is the x dimension. args: the kernel's arguments
    in order (buffer, scalar or parameter names, or "null"); default: benchmark()'s args.
    """
    path = Path(file).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"load_kernel: {file} is not a file")
    if grid is not None and not isinstance(grid, (list, tuple)):
        grid = [grid]
    return Kernel(path, name, _blocks(block), list(grid) if grid is not None else None,
                  shared_bytes, list(args) if args is not None else None)


def buffer(name: str, type: str, len: Union[int, str], role: str, init: Optional[str] = None,
           tolerance: Optional[float] = None, optional: bool = False) -> Dict:
    """A device buffer: type f32/f64/f16/bf16/i32/i64/u32/u8, len an expression of the
    parameters, role input/output/inout, init e.g. "normal(0, 1)"; optional outputs may be
    left unwritten by a kernel."""
    b = {"name": name, "type": type, "len": len, "role": role}
    if init is not None:
        b["init"] = init
    if tolerance is not None:
        b["tolerance"] = tolerance
    if optional:
        b["optional"] = True
    return b


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _name(name, what: str) -> str:
    """A parameter, scalar or buffer field name: an ASCII identifier, so it is written as a
    bare TOML key and cannot add a value, a comment or a table to the manifest."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"benchmark: {what} {name!r} is not a name: use letters, digits and _ "
                         "(not starting with a digit)")
    return name


def _toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped, every other
    character (those outside the Basic Multilingual Plane included) written as itself."""
    out = []
    for c in value:
        o = ord(c)
        if 0xD800 <= o <= 0xDFFF:
            raise ValueError(f"benchmark: {value!r} holds a lone surrogate, not valid text")
        if c in '"\\':
            out.append("\\" + c)
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _toml(value) -> str:
    """A TOML value: strings escaped as TOML basic strings, lists, numbers, inline tables with
    names checked as identifiers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_name(k, 'key')} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} to a manifest")


def manifest(kernels: List[Kernel], buffers: List[Dict], args: Optional[List[str]] = None,
             reference: Optional[str] = None, scalars: Optional[Dict[str, Dict]] = None,
             flops: Optional[Union[int, str]] = None, bytes: Optional[Union[int, str]] = None,
             include: Sequence = (), **params: Sequence[int]) -> str:
    """The manifest text for these kernels; params are the sweep, e.g. N=[1024, 2048]."""
    if not kernels:
        raise ValueError("benchmark: give at least one kernel (load_kernel(...))")
    sources = {k.source for k in kernels}
    if len(sources) != 1:
        raise ValueError(f"benchmark: the kernels come from several files {sorted(map(str, sources))}; "
                         "kernel_bench compiles one file per run")
    lines = [f"source = {_toml(str(kernels[0].source))}"]
    if include:
        lines.append(f"include = {_toml([str(Path(d).resolve()) for d in include])}")
    lines.append(f"reference = {_toml(reference or kernels[0].name)}")
    if args is not None:
        lines.append(f"args = {_toml(list(args))}")
    if flops is not None:
        lines.append(f"flops = {_toml(flops)}")
    if bytes is not None:
        lines.append(f"bytes = {_toml(bytes)}")
    lines.append("\n[params]")
    for name, values in params.items():
        values = [values] if isinstance(values, int) else list(values)
        lines.append(f"{_name(name, 'parameter')} = {_toml(values)}")
    if scalars:
        lines.append("\n[scalars]")
        for name, s in scalars.items():
            lines.append(f"{_name(name, 'scalar')} = {_toml(s)}")
    for b in buffers:
        lines.append("\n[[buffer]]")
        lines.extend(f"{_name(k, 'buffer field')} = {_toml(v)}" for k, v in b.items())
    for k in kernels:
        lines.append("\n[[kernel]]")
        lines.append(f"name = {_toml(k.name)}")
        lines.append(f"block = {_toml(k.blocks)}")
        if k.grid is not None:
            lines.append(f"grid = {_toml(k.grid)}")
        if k.shared_bytes is not None:
            lines.append(f"shared_bytes = {_toml(k.shared_bytes)}")
        if k.args is not None:
            lines.append(f"args = {_toml(k.args)}")
    return "\n".join(lines) + "\n"


def kernel_bench_command() -> List[str]:
    """$OPBENCH_KERNEL_BENCH, target/release/kernel_bench of this checkout, `opbench
    kernel_bench` of the wheel installed with this package, or kernel_bench on PATH."""
    found = tool_command("kernel_bench", "OPBENCH_KERNEL_BENCH")
    if found:
        return found
    raise FileNotFoundError(
        "kernel_bench not found: install opbench's wheel (`pip install opbench-*.whl`), build it "
        "(`cargo build --release --features cuda --bin kernel_bench`), or set "
        "OPBENCH_KERNEL_BENCH to its path")


def benchmark(kernels: List[Kernel], buffers: List[Dict], args: Optional[List[str]] = None,
              device: str = "cuda", compiler: str = "auto", profile: bool = False,
              out: Optional[Union[str, Path]] = None, extra: Sequence[str] = (),
              **manifest_fields) -> List[Dict]:
    """Runs kernel_bench on the kernels and returns its rows.

    device="cuda": the artifact's `results` rows (status, params, stats.time_us, metrics,
    correctness), written to `out` (default: a temporary file). device="cpu": no GPU; the
    points kernel_bench would launch (kernel, params, block, grid, shared_bytes), after it
    checked the manifest against the source and compiled it where a compiler is installed.
    manifest_fields: reference, scalars, flops, bytes, include, and the parameters to sweep
    (N=[...], M=[...]). A failing kernel_bench raises RuntimeError with its message.
    """
    with tempfile.TemporaryDirectory(prefix="opbench_kernels_") as tmp:
        tmp = Path(tmp)
        toml_path = tmp / "kernels.toml"
        toml_path.write_text(manifest(kernels, buffers, args, **manifest_fields))
        cmd = [*kernel_bench_command(), "--manifest", str(toml_path), "--device", device,
               "--compiler", compiler]
        if device == "cpu":
            result_path = tmp / "plan.json"
            cmd += ["--plan-json", str(result_path)]
        else:
            result_path = Path(out) if out is not None else tmp / "kernels.json"
            cmd += ["--out", str(result_path), "--report", str(tmp / "report.txt")]
            if profile:
                cmd.append("--profile")
        cmd += list(extra)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"kernel_bench failed ({' '.join(cmd)}):\n{done.stderr.strip()}")
        data = json.loads(result_path.read_text())
        return data if device == "cpu" else data["results"]
