#!/usr/bin/env python3
"""Writes the tiny GPT-2-style vocabulary of tests/test-bpe.c: encoder.json (the 256 bytes in
GPT-2's order, one token per merge below, then <|endoftext|>) and vocab.bpe (the merges, in
GPT-2's printable stand-ins). Run in this directory: python3 make.py"""
import json

bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
cs = bs[:]
n = 0
for b in range(256):
    if b not in bs:
        bs.append(b)
        cs.append(256 + n)
        n += 1
sym = {b: chr(c) for b, c in zip(bs, cs)}  # GPT-2's bytes_to_unicode
merges = [("h", "e"), ("l", "l"), (" ", "t"), (" t", "he"), ("ll", "o"), ("he", "llo"),
          ("a", "a"), (" ", " "), (b"\xc3", b"\xa9"), ("\n", "\n"), ("'", "s"), ("4", "2"),
          ("aa", "a"), (" ", "hello")]
enc = {sym[b]: i for i, b in enumerate(bs)}
spell = lambda s: "".join(sym[b] for b in (s if isinstance(s, bytes) else s.encode()))
for a, b in merges:
    enc[spell(a) + spell(b)] = len(enc)
enc["<|endoftext|>"] = len(enc)
json.dump(enc, open("encoder.json", "w"))
with open("vocab.bpe", "w", encoding="utf-8") as f:
    f.write("#version: 0.2\n")
    for a, b in merges:
        f.write("%s %s\n" % (spell(a), spell(b)))
