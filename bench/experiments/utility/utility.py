#!/usr/bin/python3
"""utility.py: test accuracy / test MSE of dpopt's methods at their defaults.

For each dataset, each epsilon and R repetitions (delta 1e-5): a fresh
train/test split (seeded), rows scaled on the training split, `dpoptd solve`
on the training rows, the returned x scored here on the test rows.  Prints
one markdown table per dataset, mean +- standard error over the repetitions.
README.md (next to this file) says what is run and how; --smoke is the CI
run (3 small datasets, one epsilon, 2 repetitions).

Exit status: 0; 1 when a dpoptd run failed (the table is printed anyway,
the cell says "failed", the error goes to stderr) or, with --smoke, when a
required cell has no number; 2 on a usage error.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    from sklearn import datasets as skd
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.model_selection import train_test_split
except ImportError as exc:
    sys.exit("utility.py needs Debian's python3-sklearn (apt-get install python3-sklearn) and "
             "its python, /usr/bin/python3: %s" % exc)

try:  # a peer library, when installed (not packaged in Debian)
    from diffprivlib import models as dpl
except ImportError:
    dpl = None

DELTA = 1e-5
EPSILONS = (0.5, 1.0, 2.0, 4.0)
RANDOM_STOPPING = "select.random_stopping"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


# ---- datasets: generator(rng, n) -> (X, y); a task "binary", "multiclass" or "regression" ----

def synthetic_logistic(rng, n):
    """d = 20, x ~ N(0, I), P(y = 1) = sigmoid(<w*, x>), |w*| = 2."""
    w = rng.standard_normal(20)
    w *= 2.0 / np.linalg.norm(w)
    x = rng.standard_normal((n, 20))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x @ w))).astype(int)
    return x, y


def synthetic_least_squares(rng, n):
    """d = 20, x ~ N(0, I), y = <w*, x> + N(0, 0.5^2), |w*| = 1."""
    w = rng.standard_normal(20)
    w /= np.linalg.norm(w)
    x = rng.standard_normal((n, 20))
    return x, x @ w + 0.5 * rng.standard_normal(n)


def sk(loader):
    """A dataset bundled with scikit-learn: the same rows each repetition (the split changes)."""
    return lambda rng, n: loader(return_X_y=True)


# name -> (task, generator(rng, n), n for the full run, n for --smoke)
DATASETS = {
    "breast_cancer": ("binary", sk(skd.load_breast_cancer), 569, 569),
    "wine": ("multiclass", sk(skd.load_wine), 178, 178),
    "digits": ("multiclass", sk(skd.load_digits), 1797, 1797),
    "diabetes": ("regression", sk(skd.load_diabetes), 442, 442),
    "synthetic_logistic": ("binary", synthetic_logistic, 10000, 1000),
    "synthetic_least_squares": ("regression", synthetic_least_squares, 10000, 1000),
}
SMOKE_DATASETS = ("synthetic_logistic", "wine", "diabetes")


def prepare(task, x, y, seed):
    """The split and the scaling, from the training split only.

    Features: standardized with the training mean and standard deviation,
    then divided by the largest training row norm (training rows: norm <= 1);
    test rows the same, then any row of norm > 1 rescaled to 1.  Regression
    labels: minus the training mean, divided by the largest |.| on the
    training split (training labels in [-1, 1]; test labels not clipped).
    """
    xtr, xte, ytr, yte = train_test_split(
        x, y, test_size=0.25, random_state=seed,
        stratify=None if task == "regression" else y)
    mu, sd = xtr.mean(axis=0), xtr.std(axis=0)
    sd[sd == 0] = 1.0
    xtr, xte = (xtr - mu) / sd, (xte - mu) / sd
    scale = np.linalg.norm(xtr, axis=1).max()
    xtr, xte = xtr / scale, xte / scale
    xte /= np.maximum(1.0, np.linalg.norm(xte, axis=1))[:, None]
    if task == "regression":
        m = ytr.mean()
        s = np.abs(ytr - m).max()
        ytr, yte = (ytr - m) / s, (yte - m) / s
    return xtr, xte, ytr, yte


def write_problem(directory, task, xtr, ytr, classes):
    """The training CSV (features, then the label) and its schema file."""
    data = os.path.join(directory, "train.csv")
    label_fmt = "%.17g" if task == "regression" else "%d"
    np.savetxt(data, np.column_stack([xtr, ytr]), delimiter=",",
               fmt=["%.17g"] * xtr.shape[1] + [label_fmt])
    schema = {"features": xtr.shape[1], "task": task}
    bounds = {"feature_l2": 1.0}
    if task == "binary":
        schema["labels"] = [0, 1]  # mapped to -1 / +1 at upload
    elif task == "multiclass":
        schema["classes"] = classes
    else:
        bounds["label"] = 1.0
    path = os.path.join(directory, "schema.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"schema": schema, "bounds": bounds}, f)
    return data, path


# ---- scoring a linear model on the test split ----

def score(task, xte, yte, coef, classes):
    """Test accuracy, or test MSE for regression, of dpopt's x (the intercept,
    when there is one, last; multiclass: d x K feature-major, then K
    intercepts)."""
    d = xte.shape[1]
    if task == "multiclass":
        w = np.asarray(coef[:d * classes]).reshape(d, classes)
        b = np.asarray(coef[d * classes:]) if len(coef) > d * classes else 0.0
        return float(np.mean(np.argmax(xte @ w + b, axis=1) == yte))
    margin = xte @ np.asarray(coef[:d]) + (coef[d] if len(coef) > d else 0.0)
    if task == "binary":
        return float(np.mean((margin > 0) == (yte == 1)))
    return float(np.mean((margin - yte) ** 2))


def metric(task, model, xte, yte):
    """Accuracy or MSE of a fitted sklearn-style model."""
    pred = model.predict(xte)
    if task == "regression":
        return float(np.mean((pred - yte) ** 2))
    return float(np.mean(pred == yte))


# ---- dpopt ----

class Dpopt:
    def __init__(self, binary):
        self.bin = binary
        out = subprocess.run([binary, "solve", "--list"], check=True, capture_output=True,
                             text=True).stdout
        self.catalogue = {a["name"]: a for a in json.loads(out)["algorithms"]}
        self.failures = 0

    def solve(self, algorithm, objective, data, schema, eps, constraint=None):
        """(x, None) of one run, or (None, dpoptd's error message)."""
        cmd = [self.bin, "solve", "--data", data, "--format", "csv", "--schema", schema,
               "--algorithm", algorithm, "--objective", objective,
               "--epsilon", repr(eps), "--delta", repr(DELTA)]
        if constraint is not None:
            cmd += ["--constraint", constraint]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr
        return json.loads(r.stdout)["x"], None


def default_radius(task, intercept):
    """dp_sgd.subsampled's default ball (subsampled_default_set): radius
    max(10, 2 Y) / X, X the row bound (with the intercept's 1), Y the label
    bound; here X = 1 (rows scaled to norm <= 1) and Y = 1 (regression)."""
    x = (2.0 if intercept else 1.0) ** 0.5
    y = 1.0 if task == "regression" else 0.0
    return max(10.0, 2.0 * y) / x


OBJECTIVE = {"binary": "logistic", "multiclass": "multiclass_logistic",
             "regression": "least_squares"}


# (algorithm, how its constraint is chosen); a column each, "n/a" when --list lacks it
METHODS = (("dp_sgd.one_pass", "rule"), ("dp_sgd.subsampled", "none"),
           (RANDOM_STOPPING, "none, else rule"))


def run_dpopt(dp, algorithm, how, task, data, schema, eps):
    """(x, None), or (None, what the cell says).  how "rule": the l2 ball of the default-set
    radius without an intercept (the default of every method but dp_sgd.subsampled);
    "none, else rule": no constraint, and that ball when the method refuses to run
    without one."""
    obj = OBJECTIVE[task]
    entry = dp.catalogue[algorithm]
    names = [o["name"] for o in entry.get("objectives", [])]
    if names and obj not in names:
        return None, "n/a (no %s)" % obj
    required = [p["name"] for p in entry.get("params", []) if "default" not in p]
    if required:
        return None, "n/a (needs %s)" % ",".join(required)
    ball = "l2_ball:radius=%r" % default_radius(task, False)
    if how == "rule":
        x, err = dp.solve(algorithm, obj, data, schema, eps, ball)
    else:
        x, err = dp.solve(algorithm, obj, data, schema, eps)
        if x is None and '"constraints' in err:
            x, err = dp.solve(algorithm, obj, data, schema, eps, ball)
    if x is None:
        dp.failures += 1
        print("utility.py: %s eps=%g failed: %s" % (algorithm, eps, err.strip()), file=sys.stderr)
        return None, "failed"
    return x, None


# ---- the references ----

def non_private(task, xtr, ytr, intercept):
    if task == "regression":
        return LinearRegression(fit_intercept=intercept).fit(xtr, ytr)
    return LogisticRegression(C=1e4, fit_intercept=intercept, max_iter=100000).fit(xtr, ytr)


def diffprivlib_model(task, xtr, ytr, eps, intercept):
    if task == "regression":
        m = dpl.LinearRegression(epsilon=eps, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0),
                                 fit_intercept=intercept)
    else:
        m = dpl.LogisticRegression(epsilon=eps, data_norm=1.0, fit_intercept=intercept)
    return m.fit(xtr, ytr)


def trivial(task, ytr, yte):
    if task == "regression":
        return float(np.mean((yte - ytr.mean()) ** 2))
    values, counts = np.unique(ytr, return_counts=True)
    return float(np.mean(yte == values[np.argmax(counts)]))


# ---- the experiment ----

def show(v):
    """A parameter's default as --list gives it: a number, or any JSON."""
    return "%g" % v if isinstance(v, (int, float)) and not isinstance(v, bool) else json.dumps(v)


def cell(values):
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return "%.3f" % v[0] if len(v) else "—"
    return "%.3f ± %.3f" % (v.mean(), v.std(ddof=1) / np.sqrt(len(v)))


def run_dataset(dp, name, n, reps, epsilons, seed, tmp):
    """Runs everything on one dataset and prints its table; False when a
    cell of dpopt or the non-private or trivial references has no number
    and no "n/a" (not in this build, an objective or a parameter it lacks)."""
    task, gen = DATASETS[name][:2]
    columns = [m[0] for m in METHODS] + ["diffprivlib", "non-private", "trivial"]
    res = {(eps, c): [] for eps in epsilons for c in columns}
    notes = {}
    # the intercept of the references: as dp_sgd.subsampled's default (on for the
    # one-margin losses, off for multiclass_logistic); one_pass's default is off
    intercept = task != "multiclass"
    for r in range(reps):
        s = seed + r
        x, y = gen(np.random.default_rng(s), n)
        xtr, xte, ytr, yte = prepare(task, x, y, s)
        classes = int(max(ytr.max(), yte.max())) + 1 if task == "multiclass" else 0
        d = os.path.join(tmp, "%s-%d" % (name, r))
        os.makedirs(d)
        data, schema = write_problem(d, task, xtr, ytr, classes)
        opt = metric(task, non_private(task, xtr, ytr, intercept), xte, yte)
        triv = trivial(task, ytr, yte)
        for eps in epsilons:
            res[eps, "non-private"].append(opt)
            res[eps, "trivial"].append(triv)
            for alg, how in METHODS:
                if alg not in dp.catalogue:
                    notes[eps, alg] = "n/a (not in this build)"
                    continue
                xs, why = run_dpopt(dp, alg, how, task, data, schema, eps)
                if xs is None:
                    notes[eps, alg] = why
                else:
                    res[eps, alg].append(score(task, xte, yte, xs, classes))
            if dpl is None:
                notes[eps, "diffprivlib"] = "n/a (not installed)"
            else:
                try:
                    m = diffprivlib_model(task, xtr, ytr, eps, intercept)
                    res[eps, "diffprivlib"].append(metric(task, m, xte, yte))
                except Exception as exc:  # a peer's failure is reported, not fatal
                    print("utility.py: diffprivlib on %s: %s" % (name, exc), file=sys.stderr)
                    notes[eps, "diffprivlib"] = "failed"
    what = "test MSE (scaled labels), lower is better" if task == "regression" else \
        "test accuracy, higher is better"
    print("\n### %s (%s, n_train %d, n_test %d, d %d): %s\n"
          % (name, task, len(ytr), len(yte), xtr.shape[1], what))
    print("| ε | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for eps in epsilons:
        cells = [notes.get((eps, c)) or cell(res[eps, c]) for c in columns]
        print("| %g | %s |" % (eps, " | ".join(cells)))
    sys.stdout.flush()
    return all(len(res[eps, c]) == reps or notes.get((eps, c), "").startswith("n/a")
               for eps in epsilons for c in columns if c != "diffprivlib")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dpoptd", default=os.path.join(ROOT, "build", "release", "service", "dpoptd"))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--epsilons", default=",".join("%g" % e for e in EPSILONS))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--seed", type=int, default=1, help="repetition r uses seed + r")
    ap.add_argument("--smoke", action="store_true",
                    help="CI: %s at small n, epsilon 1, 2 repetitions" % ", ".join(SMOKE_DATASETS))
    a = ap.parse_args()
    if a.smoke:
        a.reps, a.epsilons, a.datasets = 2, "1", ",".join(SMOKE_DATASETS)
    names = a.datasets.split(",")
    if any(n not in DATASETS for n in names) or a.reps < 1:
        ap.error("--datasets: some of %s; --reps >= 1" % ",".join(DATASETS))
    epsilons = [float(e) for e in a.epsilons.split(",")]
    if not os.access(a.dpoptd, os.X_OK):
        ap.error("no dpoptd at %s (build one, or pass --dpoptd)" % a.dpoptd)
    dp = Dpopt(a.dpoptd)
    t0 = time.time()
    print("dpopt utility: %s, delta %g, %d repetitions (seeds %d..%d), dpoptd %s; %s: %s"
          % (datetime.date.today().isoformat(), DELTA, a.reps, a.seed, a.seed + a.reps - 1,
             a.dpoptd, RANDOM_STOPPING,
             "in this build" if RANDOM_STOPPING in dp.catalogue else "not in this build"))
    for alg, _ in METHODS:
        if alg in dp.catalogue:
            print("%s defaults (--list): %s" % (alg, ", ".join(
                "%s=%s" % (p["name"], show(p["default"]) if "default" in p else "(required)")
                for p in dp.catalogue[alg].get("params", []))))
    numbers = True
    with tempfile.TemporaryDirectory(prefix="dpopt-utility-") as tmp:
        for name in names:
            n = DATASETS[name][3 if a.smoke else 2]
            numbers &= run_dataset(dp, name, n, a.reps, epsilons, a.seed, tmp)
    print("\n%d dpoptd runs failed; %.0f s" % (dp.failures, time.time() - t0))
    if dp.failures:
        return 1
    if a.smoke and not numbers:
        print("utility.py: a required cell has no number", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
