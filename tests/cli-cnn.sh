#!/bin/sh
# End-to-end `ridge train cnn` / `ridge eval cnn` on a 2000-image subset of Fashion-MNIST with a
# small network: the loss must fall and the accuracy beat chance by far; --stop-after +
# --resume must reproduce an uninterrupted run bit for bit, and 1 and 2 threads must train the
# same model; bad inputs must fail with a message and the right exit code. Exit 77 (skipped)
# when the dataset is not installed.
set -u
RIDGE=$1
DATA=${2:-/usr/share/datasets/fashion-mnist}
if [ ! -e "$DATA/train-images-idx3-ubyte.gz" ] && [ ! -e "$DATA/train-images-idx3-ubyte" ]; then
    echo "SKIP: no MNIST-format dataset in $DATA"
    exit 77
fi
T=$(mktemp -d /tmp/ridge-cli-cnn.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect RC PATTERN cmd...: exit code RC and stderr containing PATTERN
expect() {
    rc=$1 pat=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    [ "$got" = "$rc" ] || fail "$* exited $got, expected $rc: $(cat "$T/err")"
    grep -q -- "$pat" "$T/err" || fail "$*: stderr lacks '$pat': $(cat "$T/err")"
}
arch=conv3x3-8,bn,relu,maxpool2,conv3x3-16,relu,maxpool2,dense-10
train="$RIDGE train cnn --data $DATA --arch $arch --limit 2000 --test-limit 1000 --epochs 3 --warmup 10 --quiet"

$train --threads 2 --json --save "$T/a.ridge" >"$T/a.json" || fail "train exited $?"
acc=$(sed 's/.*"test_accuracy": \([0-9.]*\), "saved".*/\1/' "$T/a.json")
l1=$(sed 's/.*"epoch": 1, "train_loss": \([0-9.]*\).*/\1/' "$T/a.json")
l3=$(sed 's/.*"epoch": 3, "train_loss": \([0-9.]*\).*/\1/' "$T/a.json")
awk "BEGIN { exit !($acc > 65) }" || fail "test accuracy $acc% <= 65% (chance: 10%)"
awk "BEGIN { exit !($l3 < 0.7 * $l1) }" || fail "train loss $l1 -> $l3 did not fall by 30%"
echo "3 epochs on 2000 images: train loss $l1 -> $l3, test accuracy $acc%"

$train --threads 2 --save "$T/b.ridge" --stop-after 1 >/dev/null || fail "--stop-after exited $?"
$RIDGE train cnn --data "$DATA" --limit 2000 --test-limit 1000 --epochs 3 --quiet --threads 2 \
    --resume "$T/b.ridge" --save "$T/b.ridge" >/dev/null || fail "--resume exited $?"
cmp -s "$T/a.ridge" "$T/b.ridge" || fail "stop + resume differs from one uninterrupted run"
$train --threads 1 --save "$T/c.ridge" >/dev/null || fail "train --threads 1 exited $?"
cmp -s "$T/a.ridge" "$T/c.ridge" || fail "1 thread and 2 threads trained different models"

$RIDGE eval cnn --model "$T/a.ridge" --data "$DATA" --json >"$T/e.json" || fail "eval exited $?"
grep -q '"accuracy": [0-9]' "$T/e.json" || fail "eval: $(cat "$T/e.json")"

# bad input
expect 2 "cannot read layer 'dense'" $RIDGE train cnn --arch conv3x3-4,dense
expect 2 "last layer must be a dense" $RIDGE train cnn --data "$DATA" --arch conv3x3-4 --limit 10
expect 2 "cannot change with --resume" $RIDGE train cnn --resume "$T/a.ridge" --arch dense-10
head -c 1000 "$T/a.ridge" >"$T/cut.ridge"
expect 1 "truncated" $RIDGE eval cnn --model "$T/cut.ridge" --data "$DATA"
expect 1 "bad magic" $RIDGE eval cnn --model "$T/a.json" --data "$DATA"
[ "$fails" = 0 ] && echo "cli-cnn: all passed"
exit $((fails > 0))
