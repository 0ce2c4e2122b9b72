# scripts/device/llm_parts.sh: sourced by llm.sh and suite.sh. One definition of how the
# llm_bench artifact's timed points are run: each implementation, batch and config in a process
# of its own. Where a process has already allocated and freed other engines' memory, the
# physical placement it hands the next one can cost that one's batch-16 step a few percent
# (docs/notes/decode.md: opbench at batch 16 on an H200 48.2% of the bound after candle's points
# in one process, 50.3-50.5% in eight processes of its own).
#
# llm_timed_parts BIN BASE PARTS REPEATS [FLAG...]
#   candle's ladder at batch 1 (one process: candle is host-bound) into BASE, the file the
#   parts are merged into; opbench's ladder configs at batch 1, then candle and opbench on
#   tinyllama-1.1b at batch 4 and 16, one process each, into PARTS/. FLAGs go to every run.
#   Sets LLM_PARTS to the part files in run order (merge them with `--merge`); prints one line
#   per failed run and returns 1 if any failed.
llm_timed_parts() {
  local bin=$1 base=$2 parts=$3 repeats=$4 failed=0 c b impl f
  shift 4
  LLM_PARTS=()
  rm -rf "$parts" && mkdir -p "$parts"
  timeout 200 "$bin" --weights random --config ladder --batch 1 --impl candle \
    --repeats "$repeats" "$@" --out "$base" --quiet || { echo "candle ladder run failed: $?"; failed=1; }
  # The ladder (src/llm/configs.rs), smallest first.
  for c in llama-9m llama-24m llama-58m llama-134m llama-336m tinyllama-1.1b; do
    f=$parts/opbench-$c-b1.json
    LLM_PARTS+=("$f")
    timeout 120 "$bin" --weights random --config "$c" --batch 1 --impl opbench \
      --repeats "$repeats" "$@" --out "$f" --quiet || { echo "opbench $c run failed: $?"; failed=1; }
  done
  for b in 4 16; do
    for impl in candle opbench; do
      f=$parts/$impl-tinyllama-1.1b-b$b.json
      LLM_PARTS+=("$f")
      timeout 120 "$bin" --weights random --config tinyllama-1.1b --batch "$b" --impl "$impl" \
        --repeats "$repeats" "$@" --out "$f" --quiet || { echo "$impl batch $b run failed: $?"; failed=1; }
    done
  done
  return $failed
}
