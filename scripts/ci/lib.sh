#!/usr/bin/env bash
# Shared helpers of scripts/ci/*.sh (sourced, not run): repo root, a Python venv for tools.

ci_repo() { cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd; }

# ci_venv: prints the path of a Python venv for CI tools, creating it when absent.
# Where: $OPBENCH_CI_TOOLS/venv (default ~/.cache/opbench/ci-tools/venv: outside the clone, so
# fresh clones on one machine, like CI's, reuse it).
ci_venv() {
    local venv="${OPBENCH_CI_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/opbench/ci-tools}/venv"
    if [ ! -x "$venv/bin/python" ]; then
        mkdir -p "$(dirname "$venv")"
        python3 -m venv "$venv" >&2 || {
            echo "ci: python3 -m venv failed; install python3-venv (Debian) and retry" >&2
            return 1
        }
    fi
    echo "$venv"
}

# ci_pip VENV PACKAGE... : installs into VENV quietly, logging to VENV/install.log.
ci_pip() {
    local venv="$1"
    shift
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" \
        >>"$venv/install.log" 2>&1
}

# suite_args KIND: the suite's arguments of KIND's benchmark (scripts/ci/gpu-suite.sh), from
# OPBENCH_<KIND>_ARGS, one word per line; the gate's confirmation runs the same points.
suite_args() {
    local extra
    case "$1" in
        layernorm) extra="${OPBENCH_LAYERNORM_ARGS:-}" ;;
        gemm) extra="${OPBENCH_GEMM_ARGS:-}" ;;
        llm) extra="${OPBENCH_LLM_ARGS:---weights random --config tinyllama-1.1b}" ;;
        *) echo "ci: unknown suite kind $1 (layernorm, gemm, llm)" >&2; return 2 ;;
    esac
    local words
    read -r -a words <<<"$extra"
    [ ${#words[@]} -eq 0 ] || printf '%s\n' "${words[@]}"
}
