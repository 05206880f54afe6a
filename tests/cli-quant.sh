#!/bin/sh
# End-to-end `ridge quantize` / `ridge eval qmlp` on a 3000-image Fashion-MNIST subset: the
# int8 model's accuracy is printed by both and agrees, and is within 1.5 points of fp32 (a
# small model trained on little data is noisier than the full-data test in test-quant
# --full); bad inputs fail with a message and the usage/failure exit codes. Exit 77 (skipped)
# when the dataset is not installed.
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
expect 2 "required" "$RIDGE" quantize --model "$T/m.ridge"
expect 2 "unknown option" "$RIDGE" quantize --bogus
expect 1 "cannot open" "$RIDGE" quantize --model "$T/none" -o "$T/x"
expect 1 "magic" "$RIDGE" eval qmlp --model "$T/m.ridge" --data "$DATA"
[ $fails = 0 ] && echo "cli-quant: ok (fp32 $f32%, int8 $i8%)"
exit $fails
