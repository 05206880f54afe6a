#!/bin/sh
# Crash safety of ridge's writers: files are written to PATH.tmp.PID, fsync'd and renamed, so
# at every instant PATH is the last complete file; a PATH.tmp.PID left by a killed writer is
# removed by the next save of PATH.
#   1. ITER times: resume a run from ck (saving ck after every epoch: ~10 MB each, so a good
#      share of the run is spent writing), SIGKILL it at a random instant; ck must then load
#      (`ridge eval mlp`), its epoch count must not go back, and the next iteration resumes it.
#      At most one temporary file may exist after a kill (the killed run's; older ones were
#      removed by its saves) and none after a run that ends normally.
#   2. ITER times: write a 15 MB GPT-2 checkpoint (llm.c format, `ridge gpt2 init`, seed 1 or
#      2 alternately) over g and SIGKILL it at a random instant; g must then be byte for byte
#      the seed-1 or the seed-2 checkpoint, with the same temporary-file rule.
#   3. A full disk (a tmpfs just larger than one checkpoint when mounting is permitted, else
#      RLIMIT_FSIZE): the save fails with exit 1 and a message naming the problem, the
#      previous checkpoint is intact (byte for byte) and loads, no temporary file is left.
# Usage: crash-safety.sh RIDGE ITER [DATA]. Exit 77 (skipped) without the dataset.
set -u
RIDGE=$1 ITER=$2
DATA=${3:-/usr/share/datasets/fashion-mnist}
if [ ! -e "$DATA/train-images-idx3-ubyte.gz" ] && [ ! -e "$DATA/train-images-idx3-ubyte" ]; then
    echo "SKIP: no MNIST-format dataset in $DATA"
    exit 77
fi
T=$(mktemp -d /tmp/ridge-crash.XXXXXX)
cleanup() {
    [ -n "${MNT:-}" ] && umount "$MNT" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# temps PATH WHEN: fails if more than one PATH.tmp.* exists; returns 1 if exactly one does (a
# kill landed while PATH was being written), else 0
temps() {
    n=$(ls "$1".tmp.* 2>/dev/null | wc -l)
    [ "$n" -le 1 ] || fail "$2: $n temporary files: stale ones were not removed: $(ls "$1".tmp.*)"
    [ "$n" = 0 ]
}
# a random instant in 0 .. $2 s, seeded by $1
instant() { awk -v s="$1$$" -v m="$2" 'BEGIN { srand(s); printf "%.3f", m * rand() }'; }
train="$RIDGE train mlp --data $DATA --limit 64 --layers 784,1024,10 --threads 1 --quiet"
epochs() { "$RIDGE" eval mlp --data "$DATA" --model "$1" --limit 10 --json 2>"$T/err" |
           sed -n 's/.*"epochs": \([0-9]*\),.*/\1/p'; }

# ---- 1. SIGKILL at random instants ---------------------------------------------------------
$train --epochs 1 --save "$T/ck" >/dev/null || { echo "FAIL: initial training exited $?"; exit 1; }
last=1 midwrite=0 i=0
while [ $i -lt "$ITER" ]; do
    i=$((i + 1))
    $train --epochs 100000 --resume "$T/ck" --save "$T/ck" >/dev/null 2>&1 &
    pid=$!
    # 0.2 .. 2.2 s: past start-up (loading the data set) into the epoch/save cycle
    sleep "$(awk -v s="$i$$" 'BEGIN { srand(s); printf "%.3f", 0.2 + 2 * rand() }')"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    temps "$T/ck" "iteration $i" || midwrite=$((midwrite + 1))
    e=$(epochs "$T/ck")
    if [ -z "$e" ]; then
        fail "iteration $i: the checkpoint does not load: $(cat "$T/err")"
        break
    fi
    [ "$e" -ge "$last" ] || fail "iteration $i: epochs went back from $last to $e"
    last=$e
done
# the survivor resumes and finishes an epoch normally
$train --epochs $((last + 1)) --resume "$T/ck" --save "$T/ck" >/dev/null ||
    fail "resuming after the kills exited $?"
[ "$(epochs "$T/ck")" = $((last + 1)) ] || fail "the resumed run did not reach epoch $((last + 1))"
temps "$T/ck" "after the resumed run" || fail "a temporary file survived a complete save"
echo "MLP: $ITER kills: every checkpoint loaded; $midwrite landed mid-write; reached epoch $((last + 1))"

# ---- 2. GPT-2 checkpoint (llm.c format) killed while it is written ---------------------------
init="$RIDGE gpt2 init --layers 2 --channels 256 --heads 4 --vocab 8192 --max-seq-len 256 --threads 1"
$init --seed 1 -o "$T/g1" >/dev/null && $init --seed 2 -o "$T/g2" >/dev/null &&
    cp "$T/g1" "$T/g" || { echo "FAIL: gpt2 init exited $?"; exit 1; }
start=$(date +%s%N)
$init --seed 2 -o "$T/g" >/dev/null
span=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", 1.2 * (b - a) / 1e9 }')
midwrite=0 i=0
while [ $i -lt "$ITER" ]; do
    i=$((i + 1))
    $init --seed $((i % 2 + 1)) -o "$T/g" >/dev/null 2>&1 &
    pid=$!
    sleep "$(instant "$i" "$span")"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    temps "$T/g" "gpt2 iteration $i" || midwrite=$((midwrite + 1))
    cmp -s "$T/g" "$T/g1" || cmp -s "$T/g" "$T/g2" ||
        { fail "gpt2 iteration $i: the checkpoint is neither complete file"; break; }
done
$init --seed 1 -o "$T/g" >/dev/null && cmp -s "$T/g" "$T/g1" || fail "gpt2: the last save failed"
temps "$T/g" "gpt2 after the last save" || fail "gpt2: a temporary file survived a complete save"
echo "GPT-2: $ITER kills in 0..${span} s: the checkpoint was always complete; $midwrite landed mid-write"

# ---- 3. full disk ----------------------------------------------------------------------------
D=$T/disk
mkdir -p "$D"
size=$(wc -c <"$T/ck")
if [ -z "${RIDGE_NO_TMPFS:-}" ] && mount -t tmpfs -o size=$((size * 3 / 2)) tmpfs "$D" 2>/dev/null; then
    MNT=$D how="a tmpfs of $((size * 3 / 2)) bytes"
    limit=""
else
    how="RLIMIT_FSIZE of $((size / 2)) bytes (no tmpfs mount)"
    limit=$((size / 2 / 512)) # ulimit -f counts 512-byte blocks in POSIX shells
fi
cp "$T/ck" "$D/ck" && cp "$T/ck" "$T/ck.orig"
e=$(epochs "$D/ck")
(
    if [ -n "$limit" ]; then
        trap '' XFSZ # write(2) then fails with EFBIG instead of the signal killing ridge
        ulimit -f "$limit"
    fi
    exec $train --epochs $((e + 1)) --resume "$D/ck" --save "$D/ck"
) >/dev/null 2>"$T/full.err"
rc=$?
[ "$rc" = 1 ] || fail "full disk: exited $rc, expected 1"
grep -q "cannot write" "$T/full.err" || fail "full disk: no clear message: $(cat "$T/full.err")"
cmp -s "$D/ck" "$T/ck.orig" || fail "full disk: the previous checkpoint changed"
[ "$(epochs "$D/ck")" = "$e" ] || fail "full disk: the previous checkpoint does not load"
ls "$D" | grep -q tmp && fail "full disk: a temporary file was left: $(ls "$D")"
echo "full disk ($how): $(head -c 200 "$T/full.err")"

[ $fails = 0 ] && echo "crash-safety: PASS" && exit 0
echo "crash-safety: $fails failures"
exit 1
