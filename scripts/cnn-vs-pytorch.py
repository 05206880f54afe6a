#!/usr/bin/python3
"""The CNN of `ridge train cnn` against the same network in PyTorch.

  check   the default network's first 5 training steps from ridge's own initial weights and
          batches (written by `build/tests/test-cnn --dump DIR`, which runs them and records
          the losses): PyTorch loads the checkpoint, runs the same 5 steps of SGD (lr 0.05,
          momentum 0.9, weight decay 0.01), and the losses must agree to 1e-3 relative. Exit
          status 1 if they do not. The first loss (the same weights) agrees to about 1e-6;
          rounding differences (Winograd's in ridge's dx, summation orders) then grow through
          the momentum to about 2e-4 by step 5, while a wrong gradient, layout or flatten
          order would differ by 1e-2 or more from step 2. (SGD, not AdamW: AdamW's first steps move each weight by
          about lr * sign(gradient), so gradients that are zero up to rounding make the two
          runs drift apart by design.)
  speed   epoch times side by side: the same model, data (normalized with the training set's
          mean and std), batch, optimizer (AdamW lr 1e-3, weight decay 0.01, cosine after 100
          warm-up steps), threads and epochs; rounds alternate ridge and PyTorch so noise hits
          both; each epoch's median over the rounds. PyTorch gets its fastest plain loop (one
          float tensor, batches by index, channels-first, no DataLoader). Time it alone:
          flock /tmp/ridge-bench.lock scripts/cnn-vs-pytorch.py speed ...

Both use the default network conv3x3-32,bn,relu,maxpool2,conv3x3-64,bn,relu,maxpool2,
dense-128,relu,dense-10. ridge flattens NHWC (h, w, c) before the first dense layer, so the
PyTorch model permutes to channels-last before its flatten; the weights are then identical.

usage: scripts/cnn-vs-pytorch.py check [--test build/tests/test-cnn]
       scripts/cnn-vs-pytorch.py speed [--ridge build/ridge] [--epochs 1] [--batch 64]
                                       [--threads 2] [--reps 1] [--limit N]
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
import tempfile
import time

try:
    import numpy as np
    import torch  # noqa: F401  (the oracle; checked here so a machine without it skips)
except ImportError:
    print("cnn-vs-pytorch: SKIP: needs python3-numpy and python3-torch "
          "(bash scripts/install-deps.sh --full)", file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/datasets/fashion-mnist"


def model_torch():
    import torch
    nn = torch.nn

    class ChannelsLastFlatten(nn.Module):
        def forward(self, x):
            return x.permute(0, 2, 3, 1).flatten(1)

    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        ChannelsLastFlatten(), nn.Linear(7 * 7 * 64, 128), nn.ReLU(), nn.Linear(128, 10))


def read_checkpoint(path):
    """The parameter block of a ridge CNN checkpoint (docs/FORMATS.md), as views in layer
    order: (weights, bias) per layer, each view starting on a 16-float boundary."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"RIDGECNN":
        sys.exit(f"{path}: not a ridge CNN checkpoint")
    nparams, nbuf = struct.unpack("<QQ", data[120:136])
    arch = data[256:512].split(b"\0")[0].decode()
    params = np.frombuffer(data, np.float32, count=nparams, offset=512)
    buffers = np.frombuffer(data, np.float32, count=nbuf, offset=512 + 4 * nparams)
    return arch, params, buffers


def load_into(model, params):
    """Copies the views in ridge's order into the PyTorch modules that have parameters."""
    import torch
    off = 0

    def take(n):
        nonlocal off
        v = params[off:off + n]
        off += (n + 15) // 16 * 16
        return torch.from_numpy(v.copy())

    for mod in model:
        if isinstance(mod, (torch.nn.MaxPool2d, torch.nn.ReLU)) or not list(mod.parameters()):
            if isinstance(mod, torch.nn.MaxPool2d):
                take(0), take(0)  # a pooling layer's empty views
            continue
        w, b = mod.weight, mod.bias
        with torch.no_grad():
            w.copy_(take(w.numel()).reshape(w.shape))
            b.copy_(take(b.numel()).reshape(b.shape))
    if off != len(params):
        sys.exit(f"checkpoint has {len(params)} floats, the model used {off}")


def check(a):
    import torch
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([a.test, "--dump", d], check=True, capture_output=True)
        arch, params, _ = read_checkpoint(os.path.join(d, "init.ridge"))
        x = np.fromfile(os.path.join(d, "x.f32"), np.float32).reshape(-1, 28, 28, 1)
        y = np.fromfile(os.path.join(d, "y.i32"), np.int32).astype(np.int64)
        ridge_losses = [float(v) for v in open(os.path.join(d, "losses.txt"))]
    model = model_torch()
    load_into(model, params)
    x = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()  # NHWC -> NCHW
    y = torch.from_numpy(y)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    B, worst = 64, 0.0
    print(f"{arch}\nstep  ridge loss  torch loss  relative difference")
    for s, rl in enumerate(ridge_losses):
        opt.zero_grad()
        loss = loss_fn(model(x[s * B:(s + 1) * B]), y[s * B:(s + 1) * B])
        loss.backward()
        opt.step()
        tl = loss.item()
        diff = abs(rl - tl) / abs(tl)
        worst = max(worst, diff)
        print(f"{s + 1:>4}  {rl:10.6f}  {tl:10.6f}  {diff:.2e}")
    ok = worst < 1e-3
    print(f"{'OK' if ok else 'FAIL'}: worst relative difference {worst:.2e} (tolerance 1e-3)")
    return 0 if ok else 1


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
    cmd = [a.ridge, "train", "cnn", "--data", a.data, "--epochs", str(a.epochs), "--batch",
           str(a.batch), "--threads", str(a.threads), "--json", "--quiet"]
    if a.limit:
        cmd += ["--limit", str(a.limit)]
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return [e["seconds"] for e in r["epochs"]], [e["test_accuracy"] for e in r["epochs"]]


def run_torch(a, xtr, ytr, xte, yte):
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = model_torch()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    n = xtr.shape[0]
    steps = (n + a.batch - 1) // a.batch
    total, warmup = a.epochs * steps, 100

    def lr_at(step):  # ridge_lr_at: linear warm-up to the peak, then cosine to 0
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup))))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    loss_fn = torch.nn.CrossEntropyLoss()
    times, accs = [], []
    for epoch in range(a.epochs):
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(n)
        for s in range(steps):
            idx = perm[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            loss_fn(model(xtr[idx]), ytr[idx]).backward()
            opt.step()
            sched.step()
        times.append(time.perf_counter() - t0)
        model.eval()
        with torch.no_grad():
            right = sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                        for i in range(0, len(xte), 1000))
        accs.append(100.0 * right / len(xte))
    return times, accs


def speed(a):
    import torch
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    if a.limit:
        xtr, ytr = xtr[:a.limit], ytr[:a.limit]
    xtr = xtr.astype(np.float32) / 255
    xte = xte.astype(np.float32) / 255
    mean, std = xtr.mean(), xtr.std()
    xtr = torch.from_numpy((xtr - mean) / std).unsqueeze(1)
    xte = torch.from_numpy((xte - mean) / std).unsqueeze(1)
    ytr, yte = torch.from_numpy(ytr.astype(np.int64)), torch.from_numpy(yte.astype(np.int64))
    rt, ra, tt, ta = [], [], [], []
    for rep in range(a.reps):
        t, acc = run_ridge(a)
        rt.append(t), ra.append(acc)
        t, acc = run_torch(a, xtr, ytr, xte, yte)
        tt.append(t), ta.append(acc)
        print(f"round {rep + 1}/{a.reps} done", file=sys.stderr)
    print(f"CNN (ridge's default), batch {a.batch}, AdamW lr 1e-3 wd 0.01 cosine, {a.threads} "
          f"threads, {a.epochs} epochs on {len(xtr)} images, median of {a.reps} round(s); "
          f"PyTorch {torch.__version__}")
    print(f"{'epoch':>5}  {'ridge s':>8}  {'torch s':>8}  {'torch/ridge':>11}  "
          f"{'ridge acc %':>11}  {'torch acc %':>11}")
    for e in range(a.epochs):
        r = statistics.median(x[e] for x in rt)
        t = statistics.median(x[e] for x in tt)
        print(f"{e + 1:>5}  {r:8.3f}  {t:8.3f}  {t / r:11.2f}  {ra[-1][e]:11.2f}  {ta[-1][e]:11.2f}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--test", default=os.path.join(HERE, "..", "build", "tests", "test-cnn"))
    s = sub.add_parser("speed")
    s.add_argument("--ridge", default=os.path.join(HERE, "..", "build", "ridge"))
    s.add_argument("--data", default=DATA)
    s.add_argument("--epochs", type=int, default=1)
    s.add_argument("--batch", type=int, default=64)
    s.add_argument("--threads", type=int, default=os.cpu_count())
    s.add_argument("--reps", type=int, default=1)
    s.add_argument("--limit", type=int, default=0)
    a = p.parse_args()
    sys.exit(check(a) if a.cmd == "check" else speed(a))


if __name__ == "__main__":
    main()
