#!/usr/bin/python3
"""An independent PyTorch GPT-2 as the oracle for ridge's (label: full).

usage: gpt2-torch-oracle.py PATH/TO/ridge

1. `ridge gpt2 init` writes a small random checkpoint (llm.c format).
2. This script reads it by the format's definition, runs GPT-2 in PyTorch (float64) on a
   random batch, and writes llm.c's debug state (inputs, targets, logits, loss, gradients).
3. `ridge gpt2 check` compares its probabilities, loss and every gradient tensor with it, and
   prints the losses of 10 AdamW steps on that batch, compared here with torch.optim.AdamW
   (float32) on the same model.
4. `ridge gpt2 train` on a shard holding exactly that one batch must print the same loss
   sequence, and the checkpoint it saves must hold the parameters PyTorch reached.
Exit 0 on agreement, 1 on a mismatch, 77 (skipped) without torch.
"""
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("SKIP: python3-torch is not installed")
    sys.exit(77)

RIDGE = sys.argv[1]
L, C, NH, V, MAXT = 2, 64, 4, 257, 32
B, T, STEPS, LR = 4, 32, 10, 1e-3
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(args):
    r = subprocess.run([RIDGE] + args, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        print(r.stdout, r.stderr)
        sys.exit(1)
    return r.stdout


def read_checkpoint(path):
    data = open(path, "rb").read()
    h = struct.unpack("<256i", data[:1024])
    assert h[0] == 20240326 and h[1] == 3, "bad header"
    maxT, v, l, nh, c, vp = h[2], h[3], h[4], h[5], h[6], h[7]
    shapes = [(vp, c), (maxT, c), (l, c), (l, c), (l, 3 * c, c), (l, 3 * c), (l, c, c), (l, c),
              (l, c), (l, c), (l, 4 * c, c), (l, 4 * c), (l, c, 4 * c), (l, c), (c,), (c,)]
    flat = torch.frombuffer(bytearray(data[1024:]), dtype=torch.float32)
    params, off = [], 0
    for s in shapes:
        n = math.prod(s)
        params.append(flat[off:off + n].reshape(s).clone())
        off += n
    assert off == flat.numel(), "size mismatch"
    return (maxT, v, l, nh, c, vp), params


def gpt2_loss(P, x, y, v):
    wte, wpe, ln1w, ln1b, qkvw, qkvb, apw, apb, ln2w, ln2b, fcw, fcb, fpw, fpb, lnfw, lnfb = P
    b, t = x.shape
    c = wte.shape[1]
    hs = c // NH
    h = wte[x] + wpe[:t]
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
    for l in range(L):
        a = F.layer_norm(h, (c,), ln1w[l], ln1b[l], 1e-5)
        q, k, vv = (a @ qkvw[l].T + qkvb[l]).split(c, dim=-1)
        q, k, vv = (z.view(b, t, NH, hs).transpose(1, 2) for z in (q, k, vv))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        yy = (att @ vv).transpose(1, 2).reshape(b, t, c)
        h = h + yy @ apw[l].T + apb[l]
        a = F.layer_norm(h, (c,), ln2w[l], ln2b[l], 1e-5)
        f = F.gelu(a @ fcw[l].T + fcb[l], approximate="tanh")
        h = h + f @ fpw[l].T + fpb[l]
    h = F.layer_norm(h, (c,), lnfw, lnfb, 1e-5)
    logits = (h @ wte.T)[..., :v]
    return F.cross_entropy(logits.reshape(-1, v), y.reshape(-1)), logits


def write_shard(path, tokens):
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, len(tokens), *([0] * 253)))
        f.write(struct.pack("<%dH" % len(tokens), *tokens))


def main():
    d = tempfile.mkdtemp(prefix="ridge-oracle-")
    ck = os.path.join(d, "model.bin")
    run(["gpt2", "init", "-o", ck, "--layers", str(L), "--channels", str(C), "--heads", str(NH),
         "--vocab", str(V), "--max-seq-len", str(MAXT), "--seed", "7"])
    cfg, P32 = read_checkpoint(ck)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, V, (B * T + 1,), generator=g)
    x, y = tokens[:-1].view(B, T), tokens[1:].view(B, T)

    # gradients in float64: the reference the debug state carries
    P64 = [p.double().requires_grad_() for p in P32]
    loss64, logits64 = gpt2_loss(P64, x, y, V)
    loss64.backward()
    state = os.path.join(d, "state.bin")
    with open(state, "wb") as f:
        f.write(struct.pack("<256i", 20240327, 2, B, T, *([0] * 252)))
        f.write(x.to(torch.int32).numpy().tobytes())
        f.write(y.to(torch.int32).numpy().tobytes())
        f.write(logits64.detach().float().numpy().tobytes())
        f.write(struct.pack("<f", loss64.item()))
        for p in P64:
            f.write(p.grad.float().numpy().tobytes())

    # AdamW in float32, as torch does it: losses after each of STEPS updates
    Pt = [p.clone().requires_grad_() for p in P32]
    opt = torch.optim.AdamW(Pt, lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    losses = []
    for step in range(STEPS + 1):
        opt.zero_grad()
        loss, _ = gpt2_loss(Pt, x, y, V)
        loss.backward()
        losses.append(loss.item())
        if step < STEPS:
            opt.step()
    print("torch losses:", " ".join("%.6f" % v for v in losses))

    out = run(["gpt2", "check", "--model", ck, "--state", state, "--steps", str(STEPS),
               "--lr", str(LR)])
    print(out, end="")
    check("overall: ok" in out, "ridge gpt2 check: probabilities, loss, gradients")
    steps = [float(v) for v in re.findall(r"step \d+: loss ([\d.]+)", out)]
    check(len(steps) == STEPS and all(abs(a - b) <= 1e-3 * b for a, b in zip(steps, losses[1:])),
          "10 AdamW steps on one batch: losses within 1e-3 relative of torch.optim.AdamW")

    # the trainer on a shard that holds exactly this batch: same sequence, same parameters
    shard = os.path.join(d, "one.bin")
    write_shard(shard, tokens.tolist())
    saved = os.path.join(d, "trained.bin")
    out = run(["gpt2", "train", "--model", ck, "--train", shard, "-b", str(B), "-t", str(T),
               "--steps", str(STEPS), "--lr", str(LR), "--save", saved])
    tl = [float(v) for v in re.findall(r"step \d+: train loss ([\d.]+)", out)]
    print("ridge train losses:", " ".join("%.6f" % v for v in tl))
    check(len(tl) == STEPS and abs(tl[0] - loss64.item()) <= 1e-5 * loss64.item(),
          "train step 0 loss within 1e-5 of the float64 loss")
    check(all(abs(a - b) <= 1e-3 * b for a, b in zip(tl, losses)),
          "train losses within 1e-3 relative of torch")
    # after STEPS-1 updates torch is at Pt minus one step: compare with STEPS-1 torch steps
    _, Pr = read_checkpoint(saved)
    Pt2 = [p.clone().requires_grad_() for p in P32]
    opt2 = torch.optim.AdamW(Pt2, lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    for step in range(STEPS):
        opt2.zero_grad()
        loss, _ = gpt2_loss(Pt2, x, y, V)
        loss.backward()
        opt2.step()
    worst = max((a - b.detach()).abs().max().item() for a, b in zip(Pr, Pt2))
    check(worst <= 1e-4, "saved parameters after %d steps within 1e-4 of torch (worst %.2g)"
          % (STEPS, worst))
    pad = Pr[0][V:].abs().max().item()
    check(pad == 0.0, "wte padding rows stay 0")
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
