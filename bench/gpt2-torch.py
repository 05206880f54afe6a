#!/usr/bin/python3
"""The PyTorch side of `ridge bench gpt2`: the same GPT-2 training step (forward, backward,
AdamW with llm.c's settings) in PyTorch, from the same llm.c checkpoint, for a side-by-side
ms/step.

usage: gpt2-torch.py [--model M.bin | --depth 12] [-b 4] [-t 64] [--steps 5] [--threads 2]

    ridge gpt2 init -o /tmp/d12.bin --depth 12
    flock /tmp/ridge-bench.lock ./build/ridge bench gpt2 --threads 2
    GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736 \\
        flock /tmp/ridge-bench.lock /usr/bin/python3 bench/gpt2-torch.py --model /tmp/d12.bin

(The malloc tunables stop glibc from returning and re-faulting PyTorch's 1.6 GB of temporaries
every step: PyTorch's best case on this machine, see the machine notes.)
"""
import argparse
import math
import statistics
import struct
import time

import torch
import torch.nn.functional as F


def read_checkpoint(path):
    data = open(path, "rb").read()
    h = struct.unpack("<256i", data[:1024])
    assert h[0] == 20240326 and h[1] == 3, "not an llm.c fp32 checkpoint"
    maxT, V, L, NH, C, Vp = h[2], h[3], h[4], h[5], h[6], h[7]
    flat = torch.frombuffer(bytearray(data[1024:]), dtype=torch.float32)
    return (maxT, V, L, NH, C, Vp), split(flat, (maxT, V, L, NH, C, Vp))


def split(flat, cfg):
    maxT, V, L, NH, C, Vp = cfg
    shapes = [(Vp, C), (maxT, C), (L, C), (L, C), (L, 3 * C, C), (L, 3 * C), (L, C, C), (L, C),
              (L, C), (L, C), (L, 4 * C, C), (L, 4 * C), (L, C, 4 * C), (L, C), (C,), (C,)]
    out, off = [], 0
    for s in shapes:
        n = math.prod(s)
        out.append(flat[off:off + n].reshape(s).clone())
        off += n
    return out


def random_params(depth):
    C, NH = {12: (768, 12), 24: (1024, 16), 36: (1280, 20), 48: (1600, 25)}.get(
        depth, (64 * depth, depth))
    cfg = (1024, 50257, depth, NH, C, 50304)
    n = 50304 * C + 1024 * C + depth * (12 * C * C + 13 * C) + 2 * C
    return cfg, split(torch.randn(n) * 0.02, cfg)


def loss_fn(P, x, y, cfg):
    maxT, V, L, NH, C, Vp = cfg
    wte, wpe, ln1w, ln1b, qkvw, qkvb, apw, apb, ln2w, ln2b, fcw, fcb, fpw, fpb, lnfw, lnfb = P
    b, t = x.shape
    hs = C // NH
    h = wte[x] + wpe[:t]
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
    for l in range(L):
        a = F.layer_norm(h, (C,), ln1w[l], ln1b[l], 1e-5)
        q, k, v = F.linear(a, qkvw[l], qkvb[l]).split(C, dim=-1)
        q, k, v = (z.view(b, t, NH, hs).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        yy = (att @ v).transpose(1, 2).reshape(b, t, C)
        h = h + F.linear(yy, apw[l], apb[l])
        a = F.layer_norm(h, (C,), ln2w[l], ln2b[l], 1e-5)
        h = h + F.linear(F.gelu(F.linear(a, fcw[l], fcb[l]), approximate="tanh"), fpw[l], fpb[l])
    logits = F.linear(F.layer_norm(h, (C,), lnfw, lnfb, 1e-5), wte)[..., :V]
    return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model")
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("-b", type=int, default=4)
    ap.add_argument("-t", type=int, default=64)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg, P = read_checkpoint(a.model) if a.model else random_params(a.depth)
    P = [p.requires_grad_() for p in P]
    opt = torch.optim.AdamW(P, lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    g = torch.Generator().manual_seed(1)
    tok = torch.randint(0, cfg[1], (a.b * a.t + 1,), generator=g)
    x, y = tok[:-1].view(a.b, a.t), tok[1:].view(a.b, a.t)
    times = []
    for step in range(a.steps + 1):  # the first step (allocations) is not counted
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(P, x, y, cfg)
        loss.backward()
        opt.step()
        dt = (time.perf_counter() - t0) * 1e3
        print("step %d: train loss %f (took %f ms)" % (step, loss.item(), dt))
        if step:
            times.append(dt)
    print("pytorch %s: B=%d T=%d threads=%d: median %.1f ms/step, best %.1f" % (
        torch.__version__, a.b, a.t, a.threads, statistics.median(times), min(times)))


if __name__ == "__main__":
    main()
