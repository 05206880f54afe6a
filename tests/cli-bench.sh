#!/bin/sh
# `ridge bench` options: each bench's own help after its name, a user's own SGEMM shape
# (--shape/--trans, checked and timed, as JSON), and bad options refused with the usage exit
# code and a message naming them. Timing is not judged here (benchmarks are not tests).
# usage: cli-bench.sh PATH/TO/ridge
set -u
R=$1
D=$(mktemp -d /tmp/ridge-cli-bench-XXXXXX)
trap 'rm -rf "$D"' EXIT
export XDG_CACHE_HOME="$D/cache" # the roofline it measures stays out of the user's cache
fail=0
. "$(dirname "$0")/cli-expect.sh"

expect 0 "$R" bench --help
says "benchmarks:"
expect 0 "$R" bench gemm --help
says "--shape MxNxK"
expect 0 "$R" bench conv --help
says "--layout nchw|nhwc|nchw16c|all"
for b in vec pool quant dense lowp gpt2 convbwd layout; do
    expect 0 "$R" bench "$b" --help
    says "usage: ridge bench $b"
done

expect 0 "$R" bench gemm --shape 40x50x60 --trans NT --quick --threads 1 --json
says '"case": "shape NT", "shape": "40x50x60", "thr": 1'
if command -v python3 >/dev/null; then
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["rows"]; g = r[0]["gflops"]; assert len(r) == 1 and g > 0 and r[0]["fma_loop"] > 0 and abs(r[0]["pct_fma"] * r[0]["fma_loop"] / 100 - g) < 0.01 * g + 0.2, r' "$D/out" ||
        { echo "FAIL: bench gemm --shape --json"; fail=1; }
fi

# every reorder pair and pooling case of one small tensor, checked before timing
expect 0 "$R" bench layout --quick --threads 1 --filter 17x33 --json
says '"case": "act-17x33", "layout": "nchw16c>nhwc"'
expect 2 "$R" bench layout --batch 0
says "--batch '0': expected 1..1024"

expect 2 "$R" bench gemm --shape 1x2
says "--shape '1x2': expected MxNxK"
expect 2 "$R" bench gemm --shape 0x2x3
says "expected MxNxK"
expect 2 "$R" bench gemm --trans NT
says "--trans needs --shape"
expect 2 "$R" bench gemm --shape 8x8x8 --trans NX
says "expected NN, NT, TN or TT"
expect 2 "$R" bench gemm --frobnicate
says "unknown option '--frobnicate'"
expect 2 "$R" bench vec --frobnicate
says "has none of its own"
expect 2 "$R" bench pool --x
says "unknown option '--x'"
expect 2 "$R" bench nosuch
says "unknown benchmark 'nosuch'"

[ "$fail" = 0 ] && echo "cli-bench: all passed"
exit "$fail"
