#!/usr/bin/env python3
"""Generate examples/returns_demo.csv: a demo market for log_optimal_portfolio.

4,000 periods (rows) of gross returns of 5 assets (columns a1..a5, no
label): a1 and a2 swing against each other (a1 = 1.02 + u, a2 = 1 - u, u =
+-U[0.1, 0.2] with a random sign), so a mix of the two grows faster than
either; a3..a5 lose 8% .. 12% per period with noise.  Every cell lies in
[0.8, 1.25], the declared public range (bounds.feature_range in
returns_demo.schema.json), so nothing is clipped.  Seeded: reproducible with
`python3 examples/make_returns_demo.py`.
"""
import os
import random

rng = random.Random(20261129)
n, d = 4000, 5
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "returns_demo.csv")
with open(out, "w") as f:
    f.write(",".join("a%d" % (j + 1) for j in range(d)) + "\n")
    for _ in range(n):
        u = (0.1 + 0.1 * rng.random()) * (1 if rng.random() < 0.5 else -1)
        r = [1.02 + u, 1.0 - u] + [0.9 - 0.02 * k + 0.05 * (2 * rng.random() - 1) for k in range(3)]
        r = [min(1.25, max(0.8, v)) for v in r]
        f.write(",".join("%.4f" % v for v in r) + "\n")
