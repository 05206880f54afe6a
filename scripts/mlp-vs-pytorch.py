#!/usr/bin/python3
"""Trains the same MLP with ridge and with PyTorch, side by side, and prints both epoch times
and accuracies.

Same model (784-128-10 ReLU, PyTorch's default Linear init), data (Fashion-MNIST normalized
with the training set's mean and std), batch, optimizer (AdamW lr 1e-3, weight decay 0.01,
betas 0.9/0.999), schedule (linear warm-up for 100 steps, then cosine to 0 over the run),
threads and epochs. The two runs alternate (ridge, PyTorch, ridge, ...) for --reps rounds so
that machine noise hits both; the table gives each epoch's median time over the rounds.
PyTorch gets its fastest loop: the whole dataset as one float tensor, batches by index, no
DataLoader. Time it alone: flock /tmp/ridge-bench.lock scripts/mlp-vs-pytorch.py ...

usage: scripts/mlp-vs-pytorch.py [--ridge build/ridge] [--data DIR] [--epochs 10]
                                 [--batch 64] [--threads 2] [--reps 1] [--seed 1]
"""
import argparse
import gzip
import json
import math
import os
import statistics
import struct
import subprocess
import sys
import time

import numpy as np


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 8:
        sys.exit(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(dirname, split):
    def find(kind, d):
        for name in (f"{split}-{kind}-idx{d}-ubyte.gz", f"{split}-{kind}-idx{d}-ubyte"):
            p = os.path.join(dirname, name)
            if os.path.exists(p):
                return p
        sys.exit(f"{dirname}: no {split} {kind}")
    return read_idx(find("images", 3)), read_idx(find("labels", 1))


def run_ridge(a):
    cmd = [a.ridge, "train", "mlp", "--data", a.data, "--epochs", str(a.epochs), "--batch",
           str(a.batch), "--threads", str(a.threads), "--seed", str(a.seed), "--json", "--quiet"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return [e["seconds"] for e in r["epochs"]], [e["test_accuracy"] for e in r["epochs"]]


def run_torch(a, xtr, ytr, xte, yte):
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    n = xtr.shape[0]
    steps_per_epoch = (n + a.batch - 1) // a.batch
    total, warmup = a.epochs * steps_per_epoch, 100

    def lr_at(step):  # ridge_lr_at: warm-up to the peak, then cosine to 0
        if step < warmup:
            return (step + 1) / warmup
        t = min(1.0, (step - warmup) / max(1, total - warmup))
        return 0.5 * (1 + math.cos(math.pi * t))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    loss_fn = torch.nn.CrossEntropyLoss()
    times, accs = [], []
    g = torch.Generator().manual_seed(a.seed)
    for epoch in range(a.epochs):
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(n, generator=g)
        for s in range(steps_per_epoch):
            idx = perm[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            sched.step()
        times.append(time.perf_counter() - t0)
        model.eval()
        with torch.no_grad():
            accs.append(100.0 * (model(xte).argmax(1) == yte).float().mean().item())
    return times, accs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ridge", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                   "ridge"))
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()

    import torch
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    xtr = xtr.reshape(len(xtr), -1).astype(np.float32) / 255
    xte = xte.reshape(len(xte), -1).astype(np.float32) / 255
    mean, std = xtr.mean(), xtr.std()
    xtr, xte = torch.from_numpy((xtr - mean) / std), torch.from_numpy((xte - mean) / std)
    ytr, yte = torch.from_numpy(ytr.astype(np.int64)), torch.from_numpy(yte.astype(np.int64))

    rt, ra, tt, ta = [], [], [], []
    for rep in range(a.reps):
        t, acc = run_ridge(a)
        rt.append(t), ra.append(acc)
        t, acc = run_torch(a, xtr, ytr, xte, yte)
        tt.append(t), ta.append(acc)
        print(f"round {rep + 1}/{a.reps} done", file=sys.stderr)

    print(f"MLP 784-128-10 ReLU, batch {a.batch}, AdamW lr 1e-3 wd 0.01 cosine, "
          f"{a.threads} threads, {a.epochs} epochs, median of {a.reps} round(s); "
          f"PyTorch {torch.__version__}")
    print(f"{'epoch':>5}  {'ridge s':>8}  {'torch s':>8}  {'torch/ridge':>11}  "
          f"{'ridge acc %':>11}  {'torch acc %':>11}")
    for e in range(a.epochs):
        r = statistics.median(x[e] for x in rt)
        t = statistics.median(x[e] for x in tt)
        print(f"{e + 1:>5}  {r:8.3f}  {t:8.3f}  {t / r:11.2f}  {ra[-1][e]:11.2f}  {ta[-1][e]:11.2f}")
    r = statistics.median(sum(x) for x in rt)
    t = statistics.median(sum(x) for x in tt)
    print(f"{'total':>5}  {r:8.3f}  {t:8.3f}  {t / r:11.2f}")


if __name__ == "__main__":
    main()
