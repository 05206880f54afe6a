#!/bin/sh
# Blocking vs overlapped gradient allreduce (docs/PERFORMANCE.md ## mpi): GPT-2 d2, d4, d12
# (GPT-2's vocabulary), -b 1 -t 64 per rank, 2 ranks x 1 thread on this machine, the two modes
# interleaved (blocking, overlapped, blocking, overlapped, ...: REPS times, default 2) so that
# load hits both alike.
# usage: [REPS=n] bench/mpi/overlap.sh build-mpi/ridge [depths] [bucket MB]   (run under
#        flock /tmp/ridge-bench.lock; needs python3 for the token shard)
set -eu
R=$1
DEPTHS=${2:-"2 4 12"}
MB=${3:-4}
D=$(mktemp -d /tmp/ridge-overlap-XXXXXX)
trap 'rm -rf "$D"' EXIT
python3 -c "
import struct, random
random.seed(1)
t = [random.randrange(50257) for _ in range(60000)]
open('$D/t.bin', 'wb').write(struct.pack('<256i', 20240520, 1, len(t), *[0]*253) + struct.pack('<%dH' % len(t), *t))"
MPIRUN="mpirun -np 2 --oversubscribe --allow-run-as-root"
printf "%-5s %-10s %10s %14s %12s\n" depth mode "ms/step" "after bwd ms" "Waitall ms"
for d in $DEPTHS; do
    "$R" gpt2 init -o "$D/m.bin" --depth "$d" >/dev/null
    steps=$([ "$d" -ge 12 ] && echo 6 || echo 30)
    for rep in $(seq "${REPS:-2}"); do
        for mode in blocking overlap; do
            extra=$([ "$mode" = overlap ] && echo "--bucket-mb $MB" || true)
            $MPIRUN "$R" gpt2 train --model "$D/m.bin" --train "$D/t.bin" -b 1 -t 64 \
                --steps "$steps" --val-every 0 --sample-every 0 --threads 1 $extra >"$D/out"
            step=$(sed -n 's/^average step (excluding the first): \([0-9.]*\) ms.*/\1/p' "$D/out")
            comm=$(sed -n 's/^gradient allreduce: \([0-9.]*\) ms.*/\1/p' "$D/out")
            wait=$(sed -n 's/.*MPI_Waitall \([0-9.]*\) ms.*/\1/p' "$D/out")
            printf "%-5s %-10s %10s %14s %12s\n" "d$d" "$mode" "$step" "$comm" "${wait:--}"
        done
    done
done
