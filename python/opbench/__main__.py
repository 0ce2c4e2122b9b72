"""`python -m opbench [COMMAND ARGS...]`: the `opbench` binary installed beside this package
(with no COMMAND it lists the tools and where the injection library of `trace` is)."""

import os
import sys

from ._tools import tool_path


def main() -> int:
    exe = tool_path("opbench")
    if exe is None:
        print("opbench: the `opbench` binary is not installed in this environment (install the "
              "wheel, or build it with `cargo build --release --bin opbench`)", file=sys.stderr)
        return 1
    os.execv(exe, [exe, *sys.argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
