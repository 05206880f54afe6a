#!/bin/sh
# End-to-end `ridge quantize` / `ridge eval qmlp` on a 3000-image Fashion-MNIST subset: the
# int8 model's accuracy is printed by both and agrees, and is within 1.5 points of fp32 (a
# small model trained on little data is noisier than the full-data test in test-quant
# --full); the same for a small CNN (1 epoch on 2000 images), with `ridge eval --model`
# detecting the kind from the checkpoint; bad inputs fail with a message and the usage/failure
# exit codes. Exit 77 (skipped) when the dataset is not installed.
set -u
RIDGE=$1
DATA=${2:-/usr/share/datasets/fashion-mnist}
if [ ! -e "$DATA/train-images-idx3-ubyte.gz" ] && [ ! -e "$DATA/train-images-idx3-ubyte" ]; then
    echo "SKIP: no MNIST-format dataset in $DATA"
    exit 77
fi
T=$(mktemp -d /tmp/ridge-cli-quant.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {
    rc=$1 pat=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    [ "$got" = "$rc" ] || fail "$* exited $got, expected $rc: $(cat "$T/err")"
    grep -q -- "$pat" "$T/err" || fail "$*: stderr lacks '$pat': $(cat "$T/err")"
}
$RIDGE train mlp --data "$DATA" --limit 3000 --epochs 2 --threads 2 --quiet --save "$T/m.ridge" \
    >/dev/null || fail "train exited $?"
$RIDGE quantize --model "$T/m.ridge" -o "$T/q.ridge" --data "$DATA" --calib 500 --threads 2 \
    --json >"$T/q.json" || fail "quantize exited $?"
f32=$(sed 's/.*"f32_accuracy": \([0-9.]*\),.*/\1/' "$T/q.json")
i8=$(sed 's/.*"int8_accuracy": \([0-9.]*\),.*/\1/' "$T/q.json")
awk -v a="$f32" -v b="$i8" 'BEGIN { exit !(a > 60 && b >= a - 1.5) }' ||
    fail "accuracy fp32 $f32, int8 $i8"
$RIDGE eval qmlp --model "$T/q.ridge" --data "$DATA" --threads 2 --json >"$T/e.json" ||
    fail "eval qmlp exited $?"
e=$(sed 's/.*"accuracy": \([0-9.]*\),.*/\1/' "$T/e.json")
[ "$e" = "$i8" ] || fail "eval qmlp says $e, quantize said $i8"
# the CNN: a small one, 1 epoch on 2000 images; quantize detects the kind, eval too
$RIDGE train cnn --arch conv3x3-8,bn,relu,maxpool2,dense-10 --data "$DATA" --limit 2000 \
    --test-limit 500 --epochs 1 --threads 2 --quiet --save "$T/c.ridge" >/dev/null ||
    fail "train cnn exited $?"
$RIDGE quantize --model "$T/c.ridge" -o "$T/qc.ridge" --data "$DATA" --calib 300 --threads 2 \
    --json >"$T/qc.json" || fail "quantize cnn exited $?"
grep -q '"kind": "cnn"' "$T/qc.json" || fail "quantize did not see a cnn: $(cat "$T/qc.json")"
cf32=$(sed 's/.*"f32_accuracy": \([0-9.]*\),.*/\1/' "$T/qc.json")
ci8=$(sed 's/.*"int8_accuracy": \([0-9.]*\),.*/\1/' "$T/qc.json")
awk -v a="$cf32" -v b="$ci8" 'BEGIN { exit !(a > 50 && b >= a - 1.5) }' ||
    fail "cnn accuracy fp32 $cf32, int8 $ci8"
$RIDGE eval --model "$T/qc.ridge" --data "$DATA" --threads 2 --json >"$T/ec.json" ||
    fail "eval (detected qcnn) exited $?"
e=$(sed 's/.*"accuracy": \([0-9.]*\),.*/\1/' "$T/ec.json")
[ "$e" = "$ci8" ] || fail "eval says $e, quantize said $ci8"
grep -q '"kind": "qcnn"' "$T/ec.json" || fail "eval did not detect qcnn: $(cat "$T/ec.json")"
$RIDGE eval --model "$T/c.ridge" --data "$DATA" --threads 2 >/dev/null || fail "eval (detected cnn) exited $?"
# --limit, for every kind: only the first N images
for m in c qc q; do
    $RIDGE eval --model "$T/$m.ridge" --data "$DATA" --limit 7 --json 2>/dev/null | grep -q '"images": 7' ||
        fail "eval --limit 7 of $m.ridge did not evaluate 7 images"
done
expect 1 "already an int8" "$RIDGE" quantize --model "$T/qc.ridge" -o "$T/x"
expect 1 "magic" "$RIDGE" eval qmlp --model "$T/qc.ridge" --data "$DATA"
expect 1 "not a ridge checkpoint" "$RIDGE" eval --model "$T/ec.json"
expect 2 "required" "$RIDGE" quantize --model "$T/m.ridge"
expect 2 "unknown option" "$RIDGE" quantize --bogus
expect 1 "cannot open" "$RIDGE" quantize --model "$T/none" -o "$T/x"
expect 1 "magic" "$RIDGE" eval qmlp --model "$T/m.ridge" --data "$DATA"
[ $fails = 0 ] && echo "cli-quant: ok (mlp fp32 $f32%, int8 $i8%; cnn fp32 $cf32%, int8 $ci8%)"
exit $fails
