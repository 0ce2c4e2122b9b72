#!/usr/bin/env bash
# Two settings of our LayerNorm kernel against each other in one call on one GPU: layernorm_bench
# with flags A, then with flags B, in alternating processes for ROUNDS rounds, then per point
# (shape, dtype, warm/cold) each side's median time over the rounds and B's change against A
# (negative: B faster), with how many rounds B won. Each process checks every point against the
# float64 reference before timing it, as any layernorm_bench run does. Artifacts land in
# $OUT/ab-{A,B}-ROUND.json, the table in $OUT/ab.txt.
#
# Build here:  source /root/.cache/opbench/cuda-13.0/env.sh
#              cargo build --release --features cuda --bin layernorm_bench
#              mkdir -p .device-bin/NAME
#              xz -T2 -6 -c target/release/layernorm_bench > .device-bin/NAME/layernorm_bench.xz
# Run there (carry .device-bin/NAME):
#   A="--x-cache first" B="--x-cache last" SHAPES="--shape 32768x4096" DTYPES="--dtype f32" \
#     OPBENCH_GIT_COMMIT=<sha> bash scripts/device/layernorm_ab.sh .device-bin/NAME
# Knobs: ROUNDS (default 3), SHAPES, DTYPES (layernorm_bench flags; default its own sweep),
# LIMIT_S (seconds per process, default 150).
set -uo pipefail
bins=${1:?usage: layernorm_ab.sh DIR_WITH_layernorm_bench.xz (set A and B to the flags to compare)}
out=${OUT:?set OUT to the folder for artifacts and logs}
a_flags=${A:?set A to the flags of the first setting, e.g. A=\"--x-cache first\"}
b_flags=${B:?set B to the flags of the second setting, e.g. B=\"--x-cache last\"}
rounds=${ROUNDS:-3}
export OPBENCH_GIT_DIRTY=${OPBENCH_GIT_DIRTY:-0}
bin=/tmp/layernorm_bench
xz -dc "$bins/layernorm_bench.xz" > "$bin" && chmod +x "$bin" || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv

for r in $(seq 1 "$rounds"); do
  for side in A B; do
    if [ "$side" = A ]; then flags=$a_flags; else flags=$b_flags; fi
    # shellcheck disable=SC2086 # SHAPES, DTYPES and the sides' flags hold several flags each
    timeout "${LIMIT_S:-150}" "$bin" ${SHAPES:-} ${DTYPES:-} $flags --out "$out/ab-$side-$r.json" \
      > /dev/null 2> "$out/ab-$side-$r.log"
    echo "round $r $side ($flags): rc=$?"
  done
done

python3 - "$out" "$rounds" "$a_flags" "$b_flags" <<'EOF' | tee "$out/ab.txt"
import json, os, statistics, sys
out, rounds, a_flags, b_flags = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
times = {}  # (shape, dtype, mode) -> side -> [p50 per round]
variants = {}
for r in range(1, rounds + 1):
    for side in "AB":
        path = os.path.join(out, f"ab-{side}-{r}.json")
        if not os.path.exists(path):
            print(f"missing {path}: that process failed (see its .log)")
            continue
        for row in json.load(open(path))["results"]:
            p = row["params"]
            if row["implementation"] != "opbench" or row["status"] != "ok":
                continue
            key = (p["shape"], p["dtype"], p["mode"])
            times.setdefault(key, {"A": [], "B": []})[side].append(row["stats"]["time_us"]["p50"])
            variants.setdefault(key, {})[side] = p.get("variant", "?")
print(f"A: {a_flags}\nB: {b_flags}")
print(f"{'shape':<12} {'dtype':<5} {'mode':<5} {'A us (median)':>14} {'B us (median)':>14} {'B vs A':>8} "
      f"{'B won':>6}  variants A / B")
for key in sorted(times, key=lambda k: (k[1], k[0], k[2])):
    a, b = times[key]["A"], times[key]["B"]
    if not a or not b:
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    won = sum(1 for x, y in zip(a, b) if y < x)
    v = variants[key]
    print(f"{key[0]:<12} {key[1]:<5} {key[2]:<5} {ma:>14.2f} {mb:>14.2f} {100 * (mb / ma - 1):>+7.2f}% "
          f"{won:>3}/{min(len(a), len(b))}  {v.get('A')} / {v.get('B')}")
EOF
