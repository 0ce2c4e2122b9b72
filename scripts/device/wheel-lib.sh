#!/usr/bin/env bash
# Helpers of the device scripts that take a carried wheel (sourced, not run).

# wheel_file WHEEL: prints the path of a .whl for WHEEL, which is a .whl or NAME.whl.tar.xz (the
# wheel's files as a tar, which xz packs to half the wheel's size for the 64 MiB transfer; made
# here with `mkdir w && (cd w && unzip -q ../NAME.whl && tar -cf - . | xz -9 -T2) > NAME.whl.tar.xz`)
# zipped back into /tmp/NAME.whl: the same files, whose sha256 pip checks against RECORD.
wheel_file() {
    local wheel=$1
    if [[ "$wheel" != *.whl.tar.xz ]]; then
        echo "$wheel"
        return
    fi
    local files rebuilt
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
    rm -rf "$files"
    echo "wheel: $rebuilt ($(du -b "$rebuilt" | cut -f1) bytes), zipped from the carried files" >&2
    echo "$rebuilt"
}

# torch_site: the site-packages torch is installed in (its nvidia-* CUDA wheels too), which a
# fresh venv reads through a .pth file, since the machine's torch sits in a venv of its own and
# the machine has no PyPI.
torch_site() {
    python3 -c "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))"
}

# wheel_venv DIR WHEEL: a fresh venv at DIR reading torch_site, with WHEEL installed (--no-deps);
# its commands are DIR/bin/opbench ...
wheel_venv() {
    local dir=$1 wheel site
    wheel=$(wheel_file "$2")
    rm -rf "$dir"
    python3 -m venv "$dir"
    site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    torch_site > "$site/existing-env.pth"
    "$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps "$wheel"
}
