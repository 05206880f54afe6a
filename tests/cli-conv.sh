#!/bin/sh
# `ridge conv` end to end: the explanation for the default layer and a depthwise one, --json
# that parses and agrees with the text, --tune saving its times in a temporary cache and
# reusing them, --algo forcing a method, and the refusals of bad shapes and options with the
# usage exit code and a message naming the problem.
# usage: cli-conv.sh PATH/TO/ridge
set -u
R=$1
D=$(mktemp -d /tmp/ridge-cli-conv-XXXXXX)
trap 'rm -rf "$D"' EXIT
fail=0
. "$(dirname "$0")/cli-expect.sh"
export XDG_CACHE_HOME="$D/cache"

expect 0 "$R" conv --threads 1
says "c_in=64 56x56 -> c_out=64 56x56, kernel 3x3"
says "pick: "
says "pointwise     no"
expect 0 "$R" conv --c 32 --k 32 --groups 32 --hw 112 --threads 1
says "pick: depthwise"
expect 0 "$R" conv --c 3 --k 64 --hw 224 --kernel 7 --stride 2 --threads 1
says "-> c_out=64 112x112, kernel 7x7 stride 2x2"
says "pad t3 b3 l3 r3"
expect 0 "$R" conv --hw 30x20 --kernel 1x7 --pad 0,0,3,3 --algo direct --threads 1
says "pick: direct"
says "30x20 -> c_out=64 30x20"

# JSON: parses, names 8 candidates, and its pick is the text's
if command -v python3 >/dev/null; then
    "$R" conv --threads 1 --json >"$D/j" || { echo "FAIL: --json exited $?"; fail=1; }
    "$R" conv --threads 1 >"$D/t"
    pick=$(sed -n 's/^pick: \([a-z0-9-]*\):.*/\1/p' "$D/t")
    python3 - "$D/j" "$pick" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))
assert len(j["candidates"]) == 8, j["candidates"]
assert j["pick"] == sys.argv[2], (j["pick"], sys.argv[2])
assert j["desc"]["pad"] == [1, 1, 1, 1] and j["tuned"] is False
assert all(c["measured_ms"] == 0 for c in j["candidates"] if c["applies"])
PY
fi

# --tune: measured times, saved to the cache, then read back; --retune times again
expect 0 "$R" conv --c 16 --k 16 --hw 20 --tune --threads 1
says "fastest measured"
says "saved to $XDG_CACHE_HOME/ridge/conv-tune-"
expect 0 "$R" conv --c 16 --k 16 --hw 20 --tune --threads 1
says "cached in $XDG_CACHE_HOME/ridge/conv-tune-"
expect 0 "$R" conv --c 16 --k 16 --hw 20 --retune --threads 1
says "saved to"

# refusals: usage errors (2) that name the problem
expect 2 "$R" conv --groups 3
says "groups = 3 must divide c_in = 64"
expect 2 "$R" conv --kernel 5 --algo winograd-4x3
says "winograd-4x3 does not apply"
expect 2 "$R" conv --kernel 9 --hw 4 --pad 0
says "larger than the padded input"
expect 2 "$R" conv --hw 56x
says "--hw '56x': expected N or NxM"
expect 2 "$R" conv --pad 1,2
says "one value or four"
expect 2 "$R" conv --layout nhcw
says "layout 'nhcw'"
expect 2 "$R" conv --algo fastest
says "fastest"
expect 2 "$R" conv --frobnicate
says "unknown option '--frobnicate'"
expect 0 "$R" conv --help
says "usage: ridge conv"

[ "$fail" = 0 ] && echo "cli-conv: all passed"
exit "$fail"
