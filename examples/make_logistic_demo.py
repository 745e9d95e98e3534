#!/usr/bin/env python3
"""Generate examples/logistic_demo.csv: the demo dataset of ./scripts/up.

20,000 rows, 10 features, binary labels in {-1, +1}.  Features are
Gaussian, rescaled so every row has l2 norm <= 1 (the declared bound
feature_l2 = 1 holds without clipping); labels follow a logistic model
with a fixed true weight vector of norm 4.  Seeded: the file is
reproducible with `python3 examples/make_logistic_demo.py`.

`--seed S --out FILE` writes another sample of the same model (same true
weights, other rows): ./scripts/up uses it once the demo dataset's budget
is spent, since the same rows cannot get a second budget.
"""
import argparse
import math
import os
import random

ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, default=None, help="rows from this seed (default: the file's)")
ap.add_argument("--out", default=None, help="output path (default: examples/logistic_demo.csv)")
args = ap.parse_args()
rng = random.Random(20261122)
d, n = 10, 20000
w = [rng.gauss(0, 1) for _ in range(d)]
norm = math.sqrt(sum(v * v for v in w))
w = [4.0 * v / norm for v in w]
if args.seed is not None:
    rng = random.Random(args.seed)  # the weights above stay those of the file
out = args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "logistic_demo.csv")
with open(out, "w") as f:
    f.write(",".join("x%d" % (j + 1) for j in range(d)) + ",y\n")
    for _ in range(n):
        x = [rng.gauss(0, 1) for _ in range(d)]
        s = math.sqrt(sum(v * v for v in x))
        r = min(1.0, rng.random() ** 0.5)
        x = [r * v / s for v in x]
        z = sum(a * b for a, b in zip(w, x))
        y = 1 if rng.random() < 1.0 / (1.0 + math.exp(-z)) else -1
        f.write(",".join("%.6f" % v for v in x) + ",%d\n" % y)
