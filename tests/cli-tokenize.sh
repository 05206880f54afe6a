#!/bin/sh
# ridge tokenize end to end: text -> shards + tokenizer file -> decode gives the text back ->
# `ridge gpt2 init` + `ridge train gpt2` on the shards -> `ridge generate --prompt`; documents
# (files, --separator, --split-on-blank-lines, stdin); and the refusals of bad input.
# Uses tests/data/bpe-tiny always, and the real GPT-2 vocabulary too when it is installed.
# usage: cli-tokenize.sh PATH/TO/ridge TESTS_DATA_DIR     (python3 reads the files back)
set -u
R=$1
TINY=$2/bpe-tiny
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
D=$(mktemp -d /tmp/ridge-cli-tokenize-XXXXXX)
trap 'rm -rf "$D"' EXIT
fail=0
. "$(dirname "$0")/cli-expect.sh"
# decode SHARD TOKENIZER: the shard's bytes through llm.c's tokenizer file, to stdout
decode() {
    python3 - "$1" "$2" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
h = struct.unpack("<256i", d[:1024])
assert h[0] == 20240520 and h[1] == 1 and len(d) == 1024 + 2 * h[2], "bad shard header"
t = open(sys.argv[2], "rb").read()
th = struct.unpack("<256I", t[:1024])
assert th[0] == 20240328 and th[1] == 2, "bad tokenizer header"
pieces, at = [], 1024
for i in range(th[2]):
    n = t[at]
    pieces.append(t[at + 1:at + 1 + n])
    at += 1 + n
ids = struct.unpack("<%dH" % h[2], d[1024:])
sys.stdout.buffer.write(b"".join(pieces[i] for i in ids))
EOF
}

expect 0 "$R" tokenize --help
says "end-of-text"
if "$R" tokenize "$TINY/make.py" -o "$D/x.bin" --vocab "$TINY" 2>&1 | grep -q "without PCRE2"; then
    echo "SKIP: this ridge was built without PCRE2 (no encoding)"
    exit 77
fi

# round trip through the shard and the tokenizer file; two documents, a validation split
T1=/usr/share/common-licenses/GPL-3
[ -f "$T1" ] || T1=$TINY/make.py
printf 'second document\n' >"$D/two.txt"
expect 0 "$R" tokenize "$T1" "$D/two.txt" -o "$D/tiny.bin" --val-fraction 0.2 --vocab "$TINY" \
    --tokenizer-out "$D/tiny-tok.bin" --threads 2
says "2 documents"
says "tiny_val.bin"
decode "$D/tiny_val.bin" "$D/tiny-tok.bin" >"$D/dec"
decode "$D/tiny.bin" "$D/tiny-tok.bin" >>"$D/dec"
{ printf '<|endoftext|>'; cat "$T1"; printf '<|endoftext|>'; cat "$D/two.txt"; } >"$D/want"
cmp -s "$D/dec" "$D/want" || { echo "FAIL: decoding the shards does not give the text back"; fail=1; }

# train 2 steps of a d2 model on them, then generate from a text prompt
expect 0 "$R" gpt2 init -o "$D/m.bin" --layers 2 --channels 32 --heads 2 --vocab 271 --max-seq-len 32
expect 0 "$R" train gpt2 --model "$D/m.bin" --train "$D/tiny.bin" --val "$D/tiny_val.bin" -b 2 -t 16 \
    --steps 2 --val-every 1 --tokenizer "$D/tiny-tok.bin" --save "$D/m2.bin"
[ "$(grep -c '^step .*: train loss' "$D/out")" -eq 2 ] || { echo "FAIL: not 2 step lines"; fail=1; }
expect 0 "$R" generate --model "$D/m2.bin" --tokenizer "$D/tiny-tok.bin" --vocab "$TINY" \
    --prompt "hello the" -n 4
says "hello the"
expect 0 "$R" generate --model "$D/m2.bin" --tokenizer "$D/tiny-tok.bin" --prompt-ids 261,259 -n 2
says "hello the"

# documents: --separator, --split-on-blank-lines (empty ones skipped), standard input
printf 'one\n%%\ntwo\n%%\n%%\nthree\n' >"$D/f.txt"
expect 0 "$R" tokenize "$D/f.txt" -o "$D/f.bin" --separator % --vocab "$TINY" --tokenizer-out "$D/t.bin"
says "3 documents"
[ "$(decode "$D/f.bin" "$D/t.bin")" = "<|endoftext|>one
<|endoftext|>two
<|endoftext|>three" ] || { echo "FAIL: --separator documents"; fail=1; }
printf 'a\nb\n\n\n\nc\n\n' | "$R" tokenize - -o "$D/b.bin" --split-on-blank-lines --vocab "$TINY" >"$D/out" 2>&1
says "2 documents"

# refusals: exit 2 for usage, 1 for bad files, with a message naming the problem
expect 2 "$R" tokenize "$D/two.txt"
says "-o OUT.bin is required"
expect 2 "$R" tokenize -o "$D/x.bin"
says "no input files"
expect 2 "$R" tokenize "$D/two.txt" -o "$D/x.bin" --val-fraction 1.5
says "between 0 and 1"
expect 2 "$R" tokenize "$D/two.txt" -o "$D/x.bin" --bogus
says "unknown option"
expect 2 "$R" tokenize "$D/two.txt" -o "$D/x.bin" --separator % --split-on-blank-lines
expect 1 "$R" tokenize "$D/missing.txt" -o "$D/x.bin" --vocab "$TINY"
says "missing.txt: cannot open"
: >"$D/empty.txt"
expect 1 "$R" tokenize "$D/empty.txt" -o "$D/x.bin" --vocab "$TINY"
says "nothing to write"
expect 1 "$R" tokenize "$D/two.txt" -o "$D/x.bin" --vocab "$D/novocab"
says "novocab/encoder.json"
mkdir "$D/bad"
cp "$TINY/vocab.bpe" "$D/bad/"
printf '{"!": 0, "!": 1}' >"$D/bad/encoder.json"
expect 1 "$R" tokenize "$D/two.txt" -o "$D/x.bin" --vocab "$D/bad"
says "bad/encoder.json: byte offset 9: a token that appears twice"
expect 1 "$R" tokenize "$D/two.txt" -o "$D/nodir/x.bin" --vocab "$TINY"
says "nodir/x.bin"
expect 2 "$R" generate --model "$D/m2.bin" --prompt "x" --prompt-ids 1
expect 2 "$R" generate --model "$D/m2.bin" --vocab "$TINY" --prompt "hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello"
says "at most 31"

# without the vocabulary, the built-in demo falls back to bytes with a note
expect 0 env RIDGE_BPE_DIR="$D/none" "$R" train gpt2 --steps 2 --val-every 0 --sample-every 0
says "note: the demo is byte-level"
says "byte tokens (V=257)"

# the real GPT-2 vocabulary, when installed: d2 model with V = 50257 (padded 50304)
if "$R" tokenize "$D/two.txt" -o "$D/r.bin" >"$D/out" 2>&1; then
    expect 0 "$R" tokenize "$T1" -o "$D/g.bin" --val-fraction 0.1 --tokenizer-out "$D/gtok.bin"
    decode "$D/g_val.bin" "$D/gtok.bin" >"$D/dec"
    decode "$D/g.bin" "$D/gtok.bin" >>"$D/dec"
    { printf '<|endoftext|>'; cat "$T1"; } >"$D/want"
    cmp -s "$D/dec" "$D/want" || { echo "FAIL: GPT-2 BPE round trip through the shards"; fail=1; }
    expect 0 "$R" gpt2 init -o "$D/g.m" --layers 2 --channels 32 --heads 2 --max-seq-len 32
    expect 0 "$R" train gpt2 --model "$D/g.m" --train "$D/g.bin" --val "$D/g_val.bin" -b 2 -t 16 \
        --steps 2 --tokenizer "$D/gtok.bin" --save "$D/g2.m"
    expect 0 "$R" generate --model "$D/g2.m" --tokenizer "$D/gtok.bin" --prompt "Hello world" -n 3
    says "Hello world"
    # the built-in demo of `ridge train gpt2` uses GPT-2's BPE now
    expect 0 "$R" train gpt2 --steps 2 --val-every 0 --sample-every 0
    says "GPT-2's BPE tokens (V=50257)"
else
    echo "SKIP: the GPT-2 vocabulary is not installed ($(head -c 200 "$D/out"))"
fi

[ $fail -eq 0 ] && echo "cli-tokenize: all passed"
exit $fail
