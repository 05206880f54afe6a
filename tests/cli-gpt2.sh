#!/bin/sh
# ridge gpt2 / ridge train gpt2 / ridge generate end to end on files this script writes, and
# the refusals of bad ones (exit status and a message naming the file and field).
# usage: cli-gpt2.sh PATH/TO/ridge     (needs python3 with its standard library to write files)
set -u
R=$1
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
D=$(mktemp -d /tmp/ridge-cli-gpt2-XXXXXX)
trap 'rm -rf "$D"' EXIT
fail=0

. "$(dirname "$0")/cli-expect.sh"

python3 - "$D" <<'EOF'
import struct, sys
d = sys.argv[1]
def shard(name, toks, magic=20240520, version=1, ntok=None):
    h = [magic, version, len(toks) if ntok is None else ntok] + [0] * 253
    open(d + "/" + name, "wb").write(struct.pack("<256i", *h) + struct.pack("<%dH" % len(toks), *toks))
text = [(i * 7 + i // 5) % 63 for i in range(400)]
shard("train_0.bin", [63] + text[:200])
shard("train_1.bin", [63] + text[200:])
shard("val.bin", [63] + text[::-1][:100])
shard("bad_magic.bin", text, magic=20240326)
shard("short.bin", text[:20])
shard("big_id.bin", text[:100] + [64] + text[:100])
shard("truncated.bin", text[:100], ntok=101)
tok = struct.pack("<256i", 20240328, 2, 64, 63, *([0] * 252))
for i in range(63):
    tok += bytes([1, 97 + i % 26])
tok += bytes([13]) + b"<|endoftext|>"
open(d + "/tok.bin", "wb").write(tok)
EOF

# init, train with validation, samples and save, then generate from the result
expect 0 "$R" gpt2 init -o "$D/m.bin" --layers 2 --channels 32 --heads 2 --vocab 64 --max-seq-len 16
says "wrote"
expect 0 "$R" train gpt2 --model "$D/m.bin" --train "$D/train_*.bin" --val "$D/val.bin" -b 2 \
    -t 8 --steps 12 --val-every 5 --lr 1e-3 --tokenizer "$D/tok.bin" --sample-every 10 \
    --sample-tokens 8 --save "$D/out.bin"
[ "$(grep -c '^step .*: train loss' "$D/out")" -eq 12 ] || { echo "FAIL: not 12 step lines"; fail=1; }
[ "$(grep -c '^val loss' "$D/out")" -eq 3 ] || { echo "FAIL: not 3 val loss lines"; fail=1; }
says "train dataset num_batches: 25"
says "generating:"
expect 0 "$R" generate --model "$D/out.bin" --tokenizer "$D/tok.bin" -n 10 --seed 5
cp "$D/out" "$D/gen1"
expect 0 "$R" gpt2 generate --model "$D/out.bin" --tokenizer "$D/tok.bin" -n 10 --seed 5
cmp -s "$D/out" "$D/gen1" || { echo "FAIL: generate is not deterministic"; fail=1; }
expect 0 "$R" generate --model "$D/out.bin" --prompt-ids 1,2,3 -n 4 --top-k 5 --temperature 0.7

# resume: 5 steps, save model and state, resume to 12: the same lines as 12 in one run
steps() { grep -E '^(step|val loss)' "$@" | sed 's/ (took.*//'; }
tr() { "$R" train gpt2 --train "$D/train_*.bin" --val "$D/val.bin" -b 2 -t 8 --val-every 3 \
    --lr 1e-3 "$@"; }
expect 0 tr --model "$D/m.bin" --steps 12
steps "$D/out" >"$D/full"
expect 0 tr --model "$D/m.bin" --steps 5 --save "$D/m5.bin" --save-state "$D/s5.bin"
steps "$D/out" >"$D/part"
expect 0 tr --model "$D/m5.bin" --steps 12 --resume "$D/s5.bin"
says "resuming"
steps "$D/out" >>"$D/part"
cmp -s "$D/full" "$D/part" || { echo "FAIL: a resumed run differs"; diff "$D/full" "$D/part"; fail=1; }
expect 1 tr --model "$D/m5.bin" --steps 12 --resume "$D/m5.bin"
says "m5.bin: header\[0\] magic = 20240326, expected 20240527"
expect 1 "$R" train gpt2 --model "$D/m5.bin" --train "$D/train_0.bin" -b 2 -t 8 --resume "$D/s5.bin"
says "shards"

# the built-in demo (text Debian ships), a few steps
expect 0 "$R" train gpt2 --steps 3 --val-every 2 --val-batches 1
says "built-in demo"
[ "$(grep -c '^step' "$D/out")" -eq 3 ] || { echo "FAIL: demo: not 3 steps"; fail=1; }

# refusals
expect 2 "$R" train gpt2 --model "$D/m.bin" --train "$D/train_*.bin" -t 17
says "max_seq_len 16"
expect 1 "$R" train gpt2 --model "$D/m.bin" --train "$D/bad_magic.bin" -b 2 -t 8
says "bad_magic.bin: header\[0\] magic"
expect 1 "$R" train gpt2 --model "$D/m.bin" --train "$D/short.bin" -b 2 -t 16
says "short.bin: header\[2\] ntok = 20, fewer than B\*T+1"
expect 1 "$R" train gpt2 --model "$D/m.bin" --train "$D/big_id.bin" -b 2 -t 8
says "big_id.bin: token 100 has id 64, outside the vocabulary"
expect 1 "$R" train gpt2 --model "$D/m.bin" --train "$D/truncated.bin" -b 2 -t 8
says "truncated.bin: file is 1224 bytes"
expect 1 "$R" train gpt2 --model "$D/train_0.bin" --train "$D/train_*.bin"
says "train_0.bin: header\[0\] magic"
expect 1 "$R" train gpt2 --model "$D/none.bin" --train "$D/train_*.bin"
says "none.bin: cannot open"
expect 1 "$R" train gpt2 --model "$D/m.bin" --train "$D/nothing_*.bin" -t 8
says "no file matches"
expect 1 "$R" generate --model "$D/m.bin" --tokenizer "$D/val.bin"
says "val.bin: header\[0\] magic"
expect 2 "$R" generate --model "$D/m.bin" --prompt-ids 1,99
says "bad id"
expect 2 "$R" gpt2 init
expect 2 "$R" gpt2 init -o "$D/x.bin" --channels 30 --heads 4
says "num_heads"
expect 2 "$R" gpt2 frobnicate
expect 2 "$R" train gpt2 --model "$D/m.bin"
says "go together"
expect 2 "$R" train gpt2 --model "$D/m.bin" --train "$D/train_*.bin" --lr nope
expect 0 "$R" gpt2 --help
expect 0 "$R" train gpt2 --help
[ $fail -eq 0 ] && echo "cli-gpt2: ok"
exit $fail
