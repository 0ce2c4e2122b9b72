#!/usr/bin/env bash
# Validates the fleet's Kubernetes manifests (deploy/k8s/*.yaml) against the Kubernetes API
# schemas with the PyPI package `kubernetes-validate` (installed into a local venv when absent;
# it ships the schemas, so no cluster or network beyond PyPI is needed). --strict rejects
# unknown fields. OPBENCH_K8S_VERSION picks the Kubernetes version (default: the package's).
#
# Usage: scripts/ci/validate-k8s.sh [MANIFEST...]
set -euo pipefail
# shellcheck source=scripts/ci/lib.sh
source "$(dirname "$0")/lib.sh"
repo=$(ci_repo)
cd "$repo"
shopt -s nullglob
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(deploy/k8s/*.yaml)
[ ${#files[@]} -gt 0 ] || { echo "validate-k8s: no deploy/k8s/*.yaml found" >&2; exit 1; }

kv=$(command -v kubernetes-validate || true)
if [ -z "$kv" ]; then
    venv=$(ci_venv)
    if [ ! -x "$venv/bin/kubernetes-validate" ]; then
        echo "validate-k8s: installing kubernetes-validate from PyPI into $venv" >&2
        ci_pip "$venv" kubernetes-validate || {
            echo "validate-k8s: pip install kubernetes-validate failed; see $venv/install.log" >&2
            exit 1
        }
    fi
    kv="$venv/bin/kubernetes-validate"
fi
version_args=()
[ -n "${OPBENCH_K8S_VERSION:-}" ] && version_args=(-k "$OPBENCH_K8S_VERSION")
echo "validate-k8s: kubernetes-validate $("$kv" --version 2>&1 | tail -n 1) on ${files[*]}"
"$kv" --strict "${version_args[@]}" "${files[@]}"

# The validator must be able to fail: a Job whose container has an unknown field.
bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
cat >"$bad/bad.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: bad}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: busybox
          gpus: 1
YAML
if "$kv" --strict --quiet "${version_args[@]}" "$bad/bad.yaml" >/dev/null 2>&1; then
    echo "validate-k8s: a broken manifest passed; the check is not working" >&2
    exit 1
fi
echo "validate-k8s: ok"
