#!/usr/bin/env bash
# On the GPU machine (no Rust there): install the carried wheel into a fresh venv and try it as a
# new user would (scripts/wheel-test.sh: every command's --help, kernel_bench on examples/,
# `trace` of a PyTorch script, the dashboard). The machine has no PyPI: the venv reads the
# environment of the machine's torch (with its nvidia-* CUDA 13 wheels) through a .pth file, and
# the wheel goes in with --no-deps.
# Usage, from the repo root there: bash scripts/device/wheel.sh WHEEL
# WHEEL is the .whl, or NAME.whl.tar.xz: the wheel's files as a tar (xz packs them to half the
# wheel's size, which a 64 MiB transfer needs), made here with
#   mkdir w && (cd w && unzip -q ../target/wheels/opbench-*.whl && tar -cf - . | xz -9 -T2) \
#       > .device-bin/wheel/$(basename target/wheels/opbench-*.whl).tar.xz
# and zipped back into NAME.whl there: the same files, whose sha256 pip checks against RECORD.
set -euo pipefail
wheel="${1:?usage: scripts/device/wheel.sh WHEEL}"
out="${OUT:-/tmp/opbench-out}"
mkdir -p "$out"
if [[ "$wheel" == *.whl.tar.xz ]]; then
    files=$(mktemp -d)
    xz -dc "$wheel" | tar -xf - -C "$files"
    rebuilt="/tmp/$(basename "$wheel" .tar.xz)"
    python3 - "$files" "$rebuilt" <<'PY'
import os, sys, zipfile
root, dest = sys.argv[1], sys.argv[2]
names = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
# RECORD last, as wheel builders write it.
names.sort(key=lambda n: n.endswith(".dist-info/RECORD"))
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
    for n in names:
        info = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = os.stat(os.path.join(root, n)).st_mode << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(os.path.join(root, n), "rb") as f:
            z.writestr(info, f.read())
PY
    wheel="$rebuilt"
    echo "wheel: $wheel ($(du -b "$wheel" | cut -f1) bytes), zipped from the carried files"
fi
{
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv || echo "no nvidia-smi"
    python3 --version
    ldd --version 2>&1 | sed -n 1p
    for t in cargo rustc nvcc; do command -v "$t" >/dev/null && echo "$t: $(command -v "$t")" || echo "$t: none"; done
    python3 -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)" || true
    echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
} 2>&1 | tee "$out/machine.txt"
# The environment torch is installed in (its nvidia-* wheels too): the fresh venv reads it
# through a .pth file, since the machine's torch sits in a venv of its own.
torch_site=$(python3 -c "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))")
OPBENCH_WHEEL_SITE="$torch_site" OPBENCH_WHEEL_KEEP="$out/wheel" bash scripts/wheel-test.sh "$wheel" 2>&1 \
    | tee "$out/wheel-test.log"
