#!/usr/bin/env bash
# Installs an opbench wheel into a fresh venv and tries it as a new user would:
#   scripts/wheel-test.sh target/wheels/opbench-*.whl
# - every command's --help through the `opbench` launcher, and `opbench --help`, `--version`;
# - the Python helpers import (opbench.trace_control, trace_modules, kernels);
# - `opbench trace` runs a Python script (without CUDA it says that nothing was recorded) and
#   analyses the raw files of a recorded run (--from-raw); `opbench dashboard` renders that and
#   the fixture artifacts; `opbench summarize` runs on the fixtures;
# - on a machine with no NVIDIA driver: a GPU command stops with the message naming
#   libcuda.so.1, and with the CUDA link stubs on LD_LIBRARY_PATH (scripts/cuda-toolchain.sh) the
#   GPU binary loads and prints each GPU command's --help.
# With a GPU (nvidia-smi works) it also runs kernel_bench on examples/ and traces a PyTorch
# script when torch imports. OPBENCH_WHEEL_OFFLINE=1: a venv with --system-site-packages and
# `pip install --no-deps` (a machine without PyPI whose Python already has the nvidia-* wheels,
# e.g. through torch). OPBENCH_WHEEL_SITE=DIR: the same, for packages in another environment
# (torch's venv): the fresh venv reads DIR through a .pth file. OPBENCH_WHEEL_KEEP=DIR: the commands' outputs and artifacts are copied
# there at the end. Exits non-zero on the first failure; the last line says how many passed.
set -euo pipefail
wheel="${1:?usage: scripts/wheel-test.sh WHEEL}"
[ -f "$wheel" ] || { echo "wheel-test: $wheel does not exist" >&2; exit 1; }
repo="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
ok() { passed=$((passed + 1)); echo "  ok    $*"; }
bad() { [ -n "${OPBENCH_WHEEL_KEEP:-}" ] && mkdir -p "$OPBENCH_WHEEL_KEEP" && cp -r "$work"/*.out "$OPBENCH_WHEEL_KEEP"/ 2>/dev/null
    echo "  FAIL  $*" >&2; echo "wheel-test: $passed passed, 1 failed" >&2; exit 1; }

if [ -n "${OPBENCH_WHEEL_SITE:-}" ]; then
    python3 -m venv "$work/venv"
    site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    echo "$OPBENCH_WHEEL_SITE" > "$site/existing-env.pth"
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "$wheel"
elif [ "${OPBENCH_WHEEL_OFFLINE:-0}" = "1" ]; then
    python3 -m venv --system-site-packages "$work/venv"
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "$wheel"
else
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
fi
ok "pip install $(basename "$wheel")"
bin="$work/venv/bin"
cd "$work"   # not the checkout: nothing may come from target/ or python/ of it

"$bin/opbench" --help | grep -q "opbench trace --out" || bad "opbench --help"
"$bin/opbench" --version | grep -q "^opbench " || bad "opbench --version"
ok "opbench --help, --version"
for cmd in trace compare summarize dashboard history; do
    "$bin/opbench" "$cmd" --help | grep -q "Usage: opbench $cmd" || bad "opbench $cmd --help"
    ok "opbench $cmd --help"
done
[ -f "$bin/libopbench_trace_inject.so" ] || bad "libopbench_trace_inject.so beside the binaries"
"$bin/python" -c "import opbench.trace_control, opbench.trace_modules, opbench.kernels as k; \
assert k.kernel_bench_command()[0].endswith('/opbench'), k.kernel_bench_command()" \
    || bad "the Python helpers import and find \`opbench kernel_bench\`"
ok "python: import opbench.trace_control, opbench.trace_modules, opbench.kernels"

gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1
gpu_cmds=(kernel_bench layernorm_bench gemm_bench llm_bench comm_bench opbench_env)
if [ "$gpu" = 0 ]; then
    if "$bin/opbench" kernel_bench --help >/dev/null 2>"$work/err"; then
        bad "opbench kernel_bench started without a driver"
    fi
    grep -q "libcuda.so.1 comes with the NVIDIA driver" "$work/err" || bad "no-driver message: $(cat "$work/err")"
    ok "no driver: \`opbench kernel_bench\` says libcuda.so.1 is missing"
    # The launcher's list of what opbench-gpu needs is the binary's own: every CUDA library in
    # its ELF NEEDED entries (libcudart aside: the wheel's dependency brought it) is named.
    if command -v readelf >/dev/null 2>&1; then
        for lib in $(readelf -d "$bin/opbench-gpu" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' \
                | grep -v -E '^(libstdc\+\+|libgcc_s|libm|libc|ld-linux-x86-64|libcudart)\.so'); do
            grep -q "$lib" "$work/err" || bad "the launcher does not know opbench-gpu needs $lib"
        done
        ok "the launcher names every CUDA library opbench-gpu links (readelf)"
    fi
    stubs="${OPBENCH_CUDA_STUBS:-}"
    if [ -z "$stubs" ]; then
        stubs=$(bash -c "source \"\$(bash '$repo/scripts/cuda-toolchain.sh')\" && echo \"\$OPBENCH_CUDA_STUBS\"")
    fi
    for cmd in "${gpu_cmds[@]}"; do
        LD_LIBRARY_PATH="$stubs" "$bin/opbench" "$cmd" --help | grep -q "Usage: opbench $cmd" \
            || bad "opbench $cmd --help (link stubs)"
        ok "opbench $cmd --help (the GPU binary loads against the link stubs)"
    done
else
    for cmd in "${gpu_cmds[@]}"; do
        "$bin/opbench" "$cmd" --help | grep -q "Usage: opbench $cmd" || bad "opbench $cmd --help"
        ok "opbench $cmd --help"
    done
fi

cat > "$work/job.py" <<'PY'
print("a job with no GPU work")
PY
"$bin/opbench" trace --out "$work/traces/cpu-job" -- "$bin/python" "$work/job.py" \
    >"$work/trace.out" 2>&1 || bad "opbench trace on a Python script: $(tail -5 "$work/trace.out")"
grep -q "a job with no GPU work" "$work/trace.out" || bad "the traced script's output"
if [ "$gpu" = 0 ]; then
    grep -q "nothing was recorded: no process of the command initialised CUDA" "$work/trace.out" \
        || bad "trace without CUDA: $(tail -3 "$work/trace.out")"
fi
ok "opbench trace -- python job.py (ran it; without CUDA it says nothing was recorded)"
# The analysis half of trace on a recorded run: the raw files of a two-process workload.
"$bin/opbench" trace --from-raw "$repo/tests/fixtures/trace_workload/raw" \
    --out "$work/traces/from-raw" >"$work/raw.out" 2>&1 \
    || bad "opbench trace --from-raw: $(tail -5 "$work/raw.out")"
[ -f "$work/traces/from-raw/trace.json" ] || bad "trace --from-raw wrote no trace.json"
ok "opbench trace --from-raw tests/fixtures/trace_workload/raw (trace.json written)"

if [ "$gpu" = 1 ]; then
    "$bin/opbench" kernel_bench --manifest "$repo/examples/matmul_kernels.toml" \
        --out "$work/kernels.json" >"$work/kb.out" 2>&1 || bad "kernel_bench on examples/: $(tail -5 "$work/kb.out")"
    ok "opbench kernel_bench --manifest examples/matmul_kernels.toml"
    if "$bin/python" -c "import torch; assert torch.cuda.is_available()"; then
        cat > "$work/torch_job.py" <<'PY'
import torch
x = torch.randn(1024, 1024, device="cuda")
for _ in range(10):
    x = torch.relu(x @ x.T / 1024)
torch.cuda.synchronize()
PY
        "$bin/opbench" trace --out "$work/traces/torch-job" -- "$bin/python" "$work/torch_job.py" \
            >"$work/tt.out" 2>&1 || bad "trace of a PyTorch script: $(tail -5 "$work/tt.out")"
        grep -qE "process\(es\), [1-9][0-9]* kernels" "$work/tt.out" || bad "trace of a PyTorch script recorded no kernels"
        ok "opbench trace -- python torch_job.py"
    else
        echo "  skip  trace of a PyTorch script: torch with CUDA does not import here"
    fi
fi

cp -r "$repo/tests/fixtures/artifacts" "$work/fixtures"
"$bin/opbench" dashboard --artifacts "$work/traces" --out "$work/site" >/dev/null \
    || bad "opbench dashboard on the trace"
ls "$work/site"/trace-*.html >/dev/null 2>&1 || bad "dashboard wrote no trace page"
"$bin/opbench" dashboard --artifacts "$work/fixtures" --out "$work/site2" >/dev/null \
    || bad "opbench dashboard on the fixtures"
[ -f "$work/site2/index.html" ] || bad "dashboard wrote no index.html"
ok "opbench dashboard (the trace, and the fixture artifacts)"
"$bin/opbench" summarize --artifacts "$work/fixtures" >/dev/null || bad "opbench summarize"
ok "opbench summarize"
if [ -n "${OPBENCH_WHEEL_KEEP:-}" ]; then
    mkdir -p "$OPBENCH_WHEEL_KEEP"
    cp -r "$work"/*.out "$work/traces" "$OPBENCH_WHEEL_KEEP"/
    [ -f "$work/kernels.json" ] && cp "$work/kernels.json" "$OPBENCH_WHEEL_KEEP"/
fi
echo "wheel-test: $passed passed, 0 failed"
