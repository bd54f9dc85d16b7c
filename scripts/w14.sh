#!/usr/bin/env bash
# W14 (docs/benchmarks.md): models from real exporters at their real sizes
# (tests/model_corpus/make_corpus.py --size real: torchvision's classifiers
# at 224x224 and opsets 9-17 with their int8, QDQ and float16 forms, a
# streaming LSTM, a U-Net at 1024x1024 and its int8 form), each run compiled
# by nnplug (`nnplug bench --compiled-only -d cpu`, a process per model) and
# by ONNX Runtime (node, tests/onnx_runtime/run_model.js with BENCH=N, a
# process per model), the same thread count: median latency and peak RSS of
# each process, and their ratios.
#   bash scripts/w14.sh [CALLS] [NAME_FILTER]
# The corpus is written once into build/w14_corpus (W14_CORPUS to move it).
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-5}
filter=${2:-}
corpus=${W14_CORPUS:-build/w14_corpus}
nnplug=./build/bin/nnplug
threads=${NNP_CPU_THREADS:-$(nproc)}
if [ ! -f "$corpus/manifest.json" ]; then
  echo "W14  writing the corpus at its real sizes into $corpus (once)"
  /usr/bin/python3 tests/model_corpus/make_corpus.py "$corpus" --size real > "$corpus.log" 2>&1 ||
    { echo "W14  make_corpus.py failed: see $corpus.log"; exit 1; }
fi
if [ ! -f tests/onnx_runtime/node_modules/onnxruntime-node/package.json ]; then
  echo "W14  skipped: onnxruntime-node is not installed (scripts/setup.sh installs it)"
  exit 0
fi
echo "W14  models from real exporters, $threads threads each side, $calls calls (median), compiled nnplug against ONNX Runtime"
printf 'W14  %-22s %6s %12s %12s %7s %10s %10s %7s\n' model params nnplug_us ort_us ratio nnplug_MB ort_MB ratio
/usr/bin/python3 - "$corpus/manifest.json" "$filter" <<'EOF' > "$corpus/cases.tsv"
import json, sys
for e in json.load(open(sys.argv[1])):
    if sys.argv[2] in e["name"]:
        shapes = " ".join("-s %s=%s" % (k, ",".join(map(str, v["dims"]))) for k, v in e["inputs"].items())
        feeds = json.dumps({k: {"dims": v["dims"], "random": True} for k, v in e["inputs"].items()})
        print("\t".join([e["name"], e["file"], str(e["parameters"]), shapes, feeds]))
EOF
while IFS=$'\t' read -r name file params shapes feeds; do
  # shellcheck disable=SC2086
  ours=$(NNP_CPU_THREADS=$threads "$nnplug" bench -m "$corpus/$file" $shapes -d cpu --compiled-only -n "$calls" \
    --warmup 2 2>&1) || { printf 'W14  %-22s nnplug failed: %s\n' "$name" "$(tail -1 <<<"$ours")"; continue; }
  our_us=$(awk '/^compiled +p50/ {print $3}' <<<"$ours")
  our_mb=$(awk '/^peak memory/ {print $3}' <<<"$ours")
  echo "$feeds" > "$corpus/feeds.json"
  theirs=$(BENCH=$calls node tests/onnx_runtime/run_model.js "$corpus/$file" "$threads" "$corpus/feeds.json" 2>/dev/null) ||
    { printf 'W14  %-22s ONNX Runtime failed\n' "$name"; continue; }
  read -r ort_us ort_kb < <(/usr/bin/python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["median_us"], r["max_rss_kb"])' "$theirs")
  awk -v n="$name" -v p="$params" -v a="$our_us" -v b="$ort_us" -v c="$our_mb" -v d="$ort_kb" 'BEGIN {
    printf "W14  %-22s %5.1fM %12.0f %12.0f %7.3f %10.1f %10.1f %7.3f\n", n, p / 1e6, a, b, a / b, c, d / 1024, c / (d / 1024) }'
done < "$corpus/cases.tsv"
echo "W14  (targets: latency <= 1.0 and peak RSS <= 1.2 of ONNX Runtime's; models under 1M parameters at batch 1: latency <= 0.8)"
