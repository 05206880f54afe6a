#!/bin/sh
# End-to-end `ridge train mlp` / `ridge eval mlp` on 2000-image subsets of Fashion-MNIST:
# the loss must fall and the accuracy beat chance (10%) by far; --stop-after + --resume must
# reproduce an uninterrupted run bit for bit, and 1 and 2 threads must train the same model;
# bad inputs must fail with a message naming the problem and the right exit code. Exit 77
# (skipped) when the dataset is not installed.
set -u
RIDGE=$1
DATA=${2:-/usr/share/datasets/fashion-mnist}
if [ ! -e "$DATA/train-images-idx3-ubyte.gz" ] && [ ! -e "$DATA/train-images-idx3-ubyte" ]; then
    echo "SKIP: no MNIST-format dataset in $DATA"
    exit 77
fi
T=$(mktemp -d /tmp/ridge-cli-mlp.XXXXXX)
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
train="$RIDGE train mlp --data $DATA --limit 2000 --epochs 2 --threads 2 --quiet"

$train --json --save "$T/a.ridge" >"$T/a.json" || fail "train exited $?"
acc=$(sed 's/.*"test_accuracy": \([0-9.]*\), "saved".*/\1/' "$T/a.json")
l1=$(sed 's/.*"epoch": 1, "train_loss": \([0-9.]*\).*/\1/' "$T/a.json")
l2=$(sed 's/.*"epoch": 2, "train_loss": \([0-9.]*\).*/\1/' "$T/a.json")
awk "BEGIN { exit !($acc > 65) }" || fail "test accuracy $acc% <= 65% (chance: 10%)"
awk "BEGIN { exit !($l2 < 0.7 * $l1) }" || fail "train loss $l1 -> $l2 did not fall by 30%"
echo "2 epochs on 2000 images: train loss $l1 -> $l2, test accuracy $acc% on 2000"

$train --save "$T/b.ridge" --stop-after 1 >/dev/null || fail "train --stop-after exited $?"
$train --resume "$T/b.ridge" --save "$T/b.ridge" >/dev/null || fail "train --resume exited $?"
cmp -s "$T/a.ridge" "$T/b.ridge" || fail "stop + resume differs from one uninterrupted run"
$RIDGE train mlp --data "$DATA" --limit 2000 --epochs 2 --threads 1 --quiet --save "$T/c.ridge" \
    >/dev/null || fail "train --threads 1 exited $?"
cmp -s "$T/a.ridge" "$T/c.ridge" || fail "1 thread and 2 threads trained different models"

$RIDGE eval mlp --model "$T/a.ridge" --data "$DATA" --limit 2000 --json >"$T/e.json" ||
    fail "eval exited $?"
grep -q "\"accuracy\": $acc" "$T/e.json" || fail "eval accuracy differs from training's $acc"

$RIDGE predict --model "$T/a.ridge" --data "$DATA" --index 0 --json >"$T/p.json" ||
    fail "predict exited $?"
grep -q '"index": 0, "label": 9, "top": \[{"class": [0-9]' "$T/p.json" || fail "predict: $(cat "$T/p.json")"

# bad input
expect 1 "no train images" $RIDGE train mlp --data "$T/none"
mkdir "$T/mix"
cp "$DATA"/train-images-idx3-ubyte* "$T/mix/"
cp "$DATA"/t10k-labels-idx1-ubyte.gz "$T/mix/train-labels-idx1-ubyte.gz" 2>/dev/null ||
    cp "$DATA"/t10k-labels-idx1-ubyte "$T/mix/train-labels-idx1-ubyte"
expect 1 "10000 labels but" $RIDGE train mlp --data "$T/mix"
head -c 1000 "$T/a.ridge" >"$T/cut.ridge"
expect 1 "truncated" $RIDGE eval mlp --model "$T/cut.ridge" --data "$DATA"
cp "$T/a.ridge" "$T/crc.ridge"
printf '\001' | dd of="$T/crc.ridge" bs=1 seek=5000 conv=notrunc 2>/dev/null
expect 1 "CRC" $RIDGE eval mlp --model "$T/crc.ridge" --data "$DATA"
expect 2 "has layers 784-128-10" $train --resume "$T/a.ridge" --layers 784,64,10
expect 2 "cannot change with --resume" $train --resume "$T/a.ridge" --lr 0.1
expect 1 "the loss is" $train --optimizer sgd --lr 100
expect 2 "--layers" $train --layers 784,x
expect 2 "the images have 784" $train --layers 100,10
expect 2 "unknown model" $RIDGE train nosuch
printf 'P5 10 10 255\n' >"$T/small.pgm"
head -c 100 /dev/zero >>"$T/small.pgm"
expect 1 "the model takes 784" $RIDGE predict --model "$T/a.ridge" --image "$T/small.pgm"

[ $fails = 0 ] && echo "cli-mlp: passed" || echo "cli-mlp: $fails failed"
[ $fails = 0 ]
