#!/bin/sh
# fuzz/run.sh BINDIR TARGET SECONDS: runs fuzz-TARGET for SECONDS on BINDIR/corpus/TARGET
# (kept between runs; seeded from fuzz-make-seeds on first use). A finding leaves
# BINDIR/crashes/TARGET/crash-* (or leak-*, oom-*, timeout-*) and exits non-zero.
# Extra libFuzzer flags may be passed in FUZZ_FLAGS (e.g. -jobs=2 -workers=2).
set -eu
bin=$1 t=$2 secs=$3
[ -f "$bin/seeds/.done" ] || { "$bin/fuzz-make-seeds" "$bin/seeds" && touch "$bin/seeds/.done"; }
mkdir -p "$bin/corpus/$t" "$bin/crashes/$t"
# rss and malloc limits: a reader that allocates what a hostile header asks for is a finding
exec "$bin/fuzz-$t" -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -timeout=20 -max_len=65536 -print_final_stats=1 -artifact_prefix="$bin/crashes/$t/" \
    ${FUZZ_FLAGS:-} "$bin/corpus/$t" "$bin/seeds/$t"
