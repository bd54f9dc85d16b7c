#!/usr/bin/env bash
# Issue 14, classes 5, 6, 7 and 10 as a corpus: data sets, training that must
# never destroy good work, checkpoints whose metadata lies, sizes that
# overflow, and the command line. Each case runs nnplug and checks its exit
# status and a fragment of what it printed; none may hang (each has a time
# limit), crash (status over 2) or print a raw control byte. The counts per
# class end the output. Class 9 (the conformance kit) is hostile_kit.sh.
set -uo pipefail
nnplug=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/hostile_cases.sh"
cd "$tmp"

# A small valid data set: 10 rows of 4 features and a label in 0..2, and a
# model for it.
echo '{"type": "nn.Sequential", "children": [{"type": "nn.Linear", "in_features": 4, "out_features": 3}]}' >mlp.json
good_rows() {
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "0.$i,1,2,3,$((i % 3))"; done
}
good_rows >good.csv
# data NAME: good.csv with row 3 replaced by stdin's first line
with_row() { { good_rows | sed -n 1,2p; cat; good_rows | sed -n 4,10p; } >"$1"; }
cat >train <<TRAIN
#!/usr/bin/env bash
exec "$nnplug" train --model mlp.json --epochs 1 --out "out_\$RANDOM\$RANDOM" --data "\$@"
TRAIN
chmod +x train

# ---- class 5: data sets ----
for bad in nan NaN inf -inf Infinity 1e999; do
  echo "$bad,1,2,3,0" | with_row "f_$bad.csv"
  expect 5 1 "f_$bad.csv:3: column 1: '$bad' is not a finite number" -- ./train "f_$bad.csv"
done
echo "1e39,1,2,3,0" | with_row f_big.csv
expect 5 1 "column 1: 1e39 is outside the float range" -- ./train f_big.csv
for bad in 1.5 -1 1e300 2147483648 1e-300; do
  echo "1,1,2,3,$bad" | with_row "l_$bad.csv"
  expect 5 1 "l_$bad.csv:3: the label (last column) $bad is not a class index" -- ./train "l_$bad.csv"
done
echo "1,1,2,3,3" | with_row l_3.csv
expect 5 1 "l_3.csv:3: label 3 is outside the model's 3 classes (0 to 2)" -- ./train l_3.csv
echo "1,1,2,3,0x1" | with_row l_hex.csv
expect 5 1 "column 5: '0x1' is not a number" -- ./train l_hex.csv
echo "1,1,2,3,nan" | with_row l_nan.csv
expect 5 1 "'nan' is not a finite number" -- ./train l_nan.csv
good_rows | tr , ';' >semicolons.csv
expect 5 1 "other separators are not read" -- ./train semicolons.csv
good_rows | tr , '\t' >tabs.csv
expect 5 1 "other separators are not read" -- ./train tabs.csv
good_rows | tr , ' ' >spaces.csv
expect 5 1 "other separators are not read" -- ./train spaces.csv
good_rows | tr , '|' >pipes.csv
expect 5 1 "other separators are not read" -- ./train pipes.csv
good_rows | sed 's/,/ , /g' >spaced_commas.csv
expect 5 0 "test accuracy" -- ./train spaced_commas.csv
echo "1,,2,3,0" | with_row empty_field.csv
expect 5 1 "column 2 is empty" -- ./train empty_field.csv
echo "1,1,2,3,0," | with_row trailing_comma.csv
expect 5 1 "column 6 is empty" -- ./train trailing_comma.csv
{ echo "a,b,c,d,label"; good_rows; } >header.csv
expect 5 0 "test accuracy" -- ./train header.csv
{ echo "f1,2,3,4,0"; good_rows; } >half_header.csv
expect 5 1 "--header in nnplug" -- ./train half_header.csv
expect 5 0 "test accuracy" -- ./train half_header.csv --header
good_rows | sed -n 1,4p >four_rows.csv
expect 5 1 "has 4 rows; at least 5 are needed" -- ./train four_rows.csv
echo "a,b,c,d,label" >only_header.csv
expect 5 1 "no rows" -- ./train only_header.csv
: >empty.csv
expect 5 1 "no rows" -- ./train empty.csv
echo "1,2,3,0" | with_row ragged.csv
expect 5 1 "3 features where earlier rows have 4" -- ./train ragged.csv
printf '1,2\0,3,4,0\n' | with_row nul.csv
expect 5 1 "holds a NUL byte" -- ./train nul.csv
printf '1,\033[31mred,3,4,0\n' | with_row escape.csv
expect 5 1 "\\x1b[31mred" -- ./train escape.csv
head -c 3000 /dev/urandom >random.bin
expect 5 1 "data random.bin" -- ./train random.bin
good_rows | sed 's/$/\r/' >crlf.csv
expect 5 0 "test accuracy" -- ./train crlf.csv
{ good_rows; good_rows; } | gzip >good.csv.gz
expect 5 0 "test accuracy" -- ./train good.csv.gz
head -c 40 good.csv.gz >cut.csv.gz
expect 5 1 "damaged .gz" -- ./train cut.csv.gz
{ head -c 20 good.csv.gz; head -c 200 /dev/urandom; } >garbled.csv.gz
expect 5 1 "data garbled.csv.gz" -- ./train garbled.csv.gz
mkdir dir.csv
expect 5 1 "is a directory" -- ./train dir.csv
mkfifo fifo.csv
expect 5 1 "no rows" -- ./train fifo.csv  # a named pipe no one writes to reads as empty: never a hang
expect 5 1 "cannot open" -- ./train missing.csv
{ printf '1'; head -c $((17 << 20)) /dev/zero | tr '\0' '1'; echo ",0"; } >long.csv
expect 5 1 "longer than 16 MB" -- ./train long.csv

# ---- class 6: training never destroys good work ----
expect 6 1 "--lr must be a finite number" -- "$nnplug" train --model mlp.json --data good.csv --lr inf --out lr_inf
expect 6 1 "--lr must be a finite number" -- "$nnplug" train --model mlp.json --data good.csv --lr nan --out lr_nan
expect 6 1 "no checkpoint was written" -- "$nnplug" train --model mlp.json --data good.csv --lr 3e38 --out blowup
"$nnplug" train --model mlp.json --data good.csv --epochs 2 --out kept >/dev/null
cp kept/checkpoint.safetensors kept_copy.safetensors
expect 6 1 "the checkpoint resumed from (kept/checkpoint.safetensors) is unchanged" -- "$nnplug" train --data good.csv --resume kept/checkpoint.safetensors \
  --epochs 4 --lr 3e38 --out kept
expect 6 0 "" -- cmp kept/checkpoint.safetensors kept_copy.safetensors
expect 6 1 "already holds a run" -- "$nnplug" train --model mlp.json --data good.csv --out kept
expect 6 0 "" -- cmp kept/checkpoint.safetensors kept_copy.safetensors
expect 6 0 "test accuracy" -- "$nnplug" train --model mlp.json --data good.csv --epochs 1 --out kept --force
mkdir numbered && (cd numbered && "$nnplug" train --model ../mlp.json --data ../good.csv --epochs 1 >/dev/null &&
  "$nnplug" train --model ../mlp.json --data ../good.csv --epochs 1 >/dev/null)
expect 6 0 "" -- test -s numbered/nnplug-run/checkpoint.safetensors
expect 6 0 "" -- test -s numbered/nnplug-run-2/checkpoint.safetensors
"$nnplug" train --model mlp.json --data good.csv --epochs 3 --out run3 >/dev/null
expect 6 0 "" -- test -s run3/best.safetensors
expect 6 0 "epoch,train_loss,train_accuracy,test_loss,test_accuracy" -- cat run3/metrics.csv
expect 6 0 "3," -- tail -1 run3/metrics.csv
expect 6 0 "test loss" -- cat run3/curves.svg
expect 6 0 "resuming from run3/checkpoint.safetensors after epoch 3" -- \
  "$nnplug" train --data good.csv --resume run3/checkpoint.safetensors --epochs 5
expect 6 0 "5," -- tail -1 run3/metrics.csv
expect 6 0 "" -- test "$(wc -l <run3/metrics.csv)" -eq 6
expect 6 0 "no epoch of this run beat the best before it" -- "$nnplug" train --data good.csv \
  --resume run3/checkpoint.safetensors --epochs 7 --lr 0 --out resumed_elsewhere
expect 6 0 "" -- test ! -e resumed_elsewhere/best.safetensors
cp run3/checkpoint.safetensors run3_copy.safetensors
expect 6 0 "nothing was trained or written" -- "$nnplug" train --data good.csv --resume run3/checkpoint.safetensors --epochs 2
# Resuming a run whose epochs are all done says so instead of "resuming" (and writes nothing).
expect_all 6 0 "nothing left to train: run3/checkpoint.safetensors has trained 5 epochs already" \
  "give --epochs 6 or more to go on" -- "$nnplug" train --data good.csv --resume run3/checkpoint.safetensors --epochs 5
expect 6 1 "" -- bash -c "\"\$0\" train --data good.csv --resume run3/checkpoint.safetensors --epochs 5 | grep resuming" \
  "$nnplug"
expect 6 0 "" -- cmp run3/checkpoint.safetensors run3_copy.safetensors
expect 6 1 "a resumed run keeps it" -- "$nnplug" train --data good.csv --resume run3/checkpoint.safetensors --epochs 9 --seed 4
good_rows | sed 's/^0/5/' >shifted.csv
expect 6 1 "held out other rows" -- "$nnplug" train --data shifted.csv --resume run3/checkpoint.safetensors --epochs 9 \
  --out other_rows
{ good_rows; good_rows; } >twenty.csv
expect 6 1 "held out other rows" -- "$nnplug" train --data twenty.csv --resume run3/checkpoint.safetensors --epochs 9

# Checkpoints whose metadata lies: each key named.
st() {  # st FILE METADATA_JSON: a safetensors file with no tensors
  local header="{\"__metadata__\":$2}" length i bytes=""
  length=${#header}
  for i in 0 1 2 3 4 5 6 7; do bytes+=$(printf '\\x%02x' $(((length >> (8 * i)) & 255))); done
  printf "$bytes" >"$1"
  printf '%s' "$header" >>"$1"
}
spec=$(sed 's/"/\\"/g' mlp.json)
meta() {  # the valid metadata as JSON, with KEY set to VALUE ("-": left out)
  local key value json="" sep=""
  declare -A m=([epoch]=1 [seed]=0 [rng_seed]=0 [rng_offset]=0 [data_rows]=10 [input_scale]=1 [input_shape]=4
    [model_spec]="$spec" [optimizer]=Adam [split]=0 [history]='1,1,0.5,1,0.5\n')
  if [ "$2" = - ]; then unset "m[$1]"; else m[$1]=$2; fi
  for key in "${!m[@]}"; do
    json+="$sep\"$key\":\"${m[$key]}\""
    sep=,
  done
  echo "{$json}"
}
for kv in "epoch abc" "epoch -1" "epoch 0" "epoch 99999999999999999999" "seed 1.5" "seed -3" "rng_offset x" \
  "data_rows 3" "input_scale nan" "input_scale -1" "input_scale 1e999" "history 1,2,3" "history a,b,c,d,e" \
  "epoch -" "model_spec -" "history -" "split -"; do
  set -- $kv
  st "meta_$1_$2.safetensors" "$(meta "$1" "$2")"
  expect 6 1 "metadata '$1'" -- "$nnplug" eval --checkpoint "meta_$1_$2.safetensors" --data good.csv
done

# ---- class 7: sizes from outside ----
# A header is read in seconds whatever it lists, once, and a command checks
# the metadata it needs before it loads any tensor: a million tensor entries
# (a 70 MB header; it took minutes when each metadata key re-read it).
python3 - <<'PY'
import json, struct
entries = {f"t{i}": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]} for i in range(10**6)}
header = json.dumps(dict(entries, __metadata__={"format": "pt"}), separators=(",", ":")).encode()
with open("million.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + b"\0" * (4 * 10**6))
PY
expect 7 1 "metadata 'epoch' is missing" -- "$nnplug" eval --checkpoint million.safetensors --data good.csv
for shape in 9223372036854775807,2 4611686018427387904,4611686018427387904; do
  expect 7 1 "multiply past" -- "$nnplug" train --model mlp.json --data good.csv --input-shape "$shape" --out "s_$RANDOM"
done
for shape in 99999999999999999999 0,4 -4 4,, 1e3 ""; do
  expect 7 1 "expected positive sizes" -- "$nnplug" train --model mlp.json --data good.csv --input-shape "$shape," \
    --out "s_$RANDOM"
done
expect 7 1 "at most 7 dimensions" -- "$nnplug" train --model mlp.json --data good.csv --input-shape 1,1,1,1,1,1,1,1,4 \
  --out s_dims
for size in 4611686018427387904 9223372036854775807 18446744073709551615 99999999999999999999999; do
  echo "{\"type\": \"nn.Linear\", \"in_features\": 4, \"out_features\": $size}" >"huge_$size.json"
  expect 7 1 "" -- "$nnplug" summary --model "huge_$size.json" --input-shape 2,4
done
echo '{"type": "nn.Conv2d", "in_channels": 1, "out_channels": 1, "kernel_size": [4611686018427387904, 2]}' >conv.json
expect 7 1 "" -- "$nnplug" summary --model conv.json --input-shape 1,1,8,8
echo '{"type": "nn.Conv2d", "in_channels": 1, "out_channels": 1, "kernel_size": 3, "stride": 9223372036854775807}' \
  >stride.json
expect 7 0 "" -- "$nnplug" summary --model stride.json --input-shape 1,1,8,8
echo '{"type": "nn.Conv2d", "in_channels": 1, "out_channels": 1, "kernel_size": 3, "padding": 4611686018427387904}' \
  >padding.json
expect 7 1 "" -- "$nnplug" summary --model padding.json --input-shape 1,1,8,8
echo '{"type": "nn.Conv2d", "in_channels": 1, "out_channels": 1, "kernel_size": 3, "dilation": 4611686018427387904}' \
  >dilation.json
expect 7 1 "" -- "$nnplug" summary --model dilation.json --input-shape 1,1,8,8
echo '{"type": "nn.MaxPool2d", "kernel_size": 4611686018427387904}' >pool.json
expect 7 1 "" -- "$nnplug" summary --model pool.json --input-shape 1,1,8,8
echo '{"type": "nn.Embedding", "num_embeddings": 4611686018427387904, "embedding_dim": 4}' >embedding.json
expect 7 1 "" -- "$nnplug" summary --model embedding.json --input-shape 2,4

# ---- class 10: the command line ----
expect 10 0 "test accuracy" -- "$nnplug" eval --checkpoint run3/checkpoint.safetensors --data good.csv
expect 10 0 "quantized on" -- "$nnplug" quantize --checkpoint run3/checkpoint.safetensors --data good.csv \
  --calibrate 2 --out quantized.safetensors
expect 10 0 "test accuracy" -- "$nnplug" eval --checkpoint quantized.safetensors --data good.csv
expect 10 2 "for option '--calibrate' is invalid" -- "$nnplug" quantize --checkpoint run3/checkpoint.safetensors \
  --calibrate abc --out quantize_bad
printf 'garbage' >not_a_checkpoint.safetensors
expect 10 1 "not a valid safetensors file" -- "$nnplug" quantize --checkpoint not_a_checkpoint.safetensors \
  --out quantize_bad
expect 10 1 "holds a quantized model already" -- "$nnplug" quantize --checkpoint quantized.safetensors \
  --data good.csv --out quantize_bad
expect 10 2 "unrecognised option" -- "$nnplug" train --no-such-option
expect 10 2 "" -- "$nnplug" train --epochs many
expect 10 1 "--epochs and --batch-size must be >= 1" -- "$nnplug" train --epochs 0
expect 10 1 "--input-shape" -- "$nnplug" train --model mlp.json --data good.csv --input-shape 2,x --out shape_bad
expect 10 1 "the input shape holds 6 values" -- "$nnplug" train --model mlp.json --data good.csv --input-shape 2,3 \
  --out shape_wrong
expect 10 0 "nnplug train" -- "$nnplug" train --help
# Whole numbers out of their range are refused, not wrapped (--seed -1 was 2^64 - 1).
for seed in -1 -0 18446744073709551616 1e3 1.5 " 7" 0x10; do
  expect 10 2 "('$seed') for option '--seed' is invalid" -- "$nnplug" train --model mlp.json --data good.csv \
    --seed "$seed" --epochs 1 --out "seed_bad"
done
expect 10 0 "test accuracy" -- "$nnplug" train --model mlp.json --data good.csv --seed 18446744073709551615 \
  --epochs 1 --out seed_largest
# Files a user names may be pipes (process substitution, a compressed stream).
gzip -c good.csv >piped.csv.gz
expect 10 0 "test accuracy" -- "$nnplug" train --model <(cat mlp.json) --data <(zcat piped.csv.gz) --epochs 1 \
  --out piped_run
expect 10 0 "test accuracy" -- "$nnplug" eval --checkpoint <(cat piped_run/checkpoint.safetensors) --data <(cat good.csv)
expect 10 0 "resuming from" -- "$nnplug" train --data good.csv --resume <(cat piped_run/checkpoint.safetensors) \
  --epochs 2 --out piped_resumed
ls /tmp/nnplug-pipe-* >/dev/null 2>&1 && expect 10 0 "no copy of a pipe is left behind" -- false
for threads in abc 0 -1 1e3 1025 99999999999999999999 "" " 2"; do
  expect 10 0 "(no devices: NNP_CPU_THREADS='$threads' is not a thread count" -- env NNP_CPU_THREADS="$threads" \
    "$nnplug" devices
done
expect 10 1 "is not a thread count" -- env NNP_CPU_THREADS=abc "$nnplug" train --device cpu --out threads_bad
expect 10 0 "3 threads (NNP_CPU_THREADS)" -- env NNP_CPU_THREADS=3 "$nnplug" devices
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
  expect 10 0 "1 thread (the 1 CPU this process may use)" -- env -u NNP_CPU_THREADS taskset -c 0 "$nnplug" devices
fi
if command -v script >/dev/null && script -qc true /dev/null >/dev/null 2>&1; then  # a pseudo-terminal here
  script -qc "COLUMNS=50 $nnplug train --model mlp.json --data twenty.csv --epochs 2 --out tty_run" tty.log >/dev/null
  expect 10 0 "ETA" -- cat tty.log
  widest=$(tr '\r' '\n' <tty.log | awk '/ETA/ { if (length($0) > w) w = length($0) } END { print w + 0 }')
  expect 10 0 "" -- test "$widest" -le 50
fi

finish
