#!/usr/bin/env python3
"""How much `soundtrack eval bins` moves with the thresholds: the figures at 27 neighbouring settings.

    scripts/bins-neighbourhood.py SNAPSHOTS TRUTH [--bin B] [--models DIR] [--catalog FILE] [--set KEY=VALUE ...] [--json]

The engine's bins do not depend on `--seed` (only the k-means baselines do), so running one pass
again with other seeds says nothing about how far a figure is from the next setting's. This script
runs `eval bins` at every combination of three neighbouring values of the three thresholds the
online pass is most sensitive to (docs/scoring.md): `stickiness` (× 14/15, 1, 16/15),
`create_bin_below` (− 0.05, 0, + 0.05) and `merge_transition_weight` (÷ 2, 1, × 2), around the
values of `--models` (default: the repository's Models/), with `--set` applied first (to measure a
candidate setting on its own neighbourhood). It prints the mean, standard deviation, minimum and
maximum of purity and AMI over the 27 runs, for all people and for the two halves of the people
(sorted ids, even and odd positions), and the baselines of the centre setting. A change is worth
keeping when it moves these means, on both halves, by more than their spread; see
docs/evaluation.md ("Results: bins on real phone data").
Uses only Python's standard library; two runs at a time.
"""
import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class EvalFailed(Exception):
    """A run of eval bins that exited non-zero: its status and what it printed."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("snapshots")
    ap.add_argument("truth")
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build/release/soundtrack"))
    ap.add_argument("--models", default=os.path.join(ROOT, "Models"))
    ap.add_argument("--catalog", help="passed to eval bins (default: the bundled catalog)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        print(f"error: --bin: expected an executable, got '{args.bin}' (build first: swift build -c release --product soundtrack)", file=sys.stderr)
        return 2
    with open(os.path.join(args.models, "thresholds.v2.json")) as f:
        base = json.load(f)
    for kv in args.set:
        key, _, value = kv.partition("=")
        if key not in base or not value:
            print(f"error: --set: expected KEY=VALUE with a key of thresholds.v2.json, got '{kv}'", file=sys.stderr)
            return 2
        base[key] = float(value)
    s, c, t = base["stickiness"], base["create_bin_below"], base["merge_transition_weight"]
    grid = list(itertools.product([s * 14 / 15, s, s * 16 / 15], [c - 0.05, c, c + 0.05], [t / 2, t, t * 2]))
    work = tempfile.mkdtemp(prefix="bins-neighbourhood.")

    def run(setting):
        st, cb, tw = setting
        d = os.path.join(work, f"{st:.4f}_{cb:.3f}_{tw:.3f}")
        shutil.copytree(args.models, d)
        th = dict(base, stickiness=st, create_bin_below=cb, merge_transition_weight=tw)
        with open(os.path.join(d, "thresholds.v2.json"), "w") as f:
            json.dump(th, f, indent=2)
        cmd = [args.bin, "eval", "bins", args.snapshots, "--truth", args.truth, "--json", "--models", d]
        if args.catalog:
            cmd += ["--catalog", args.catalog]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise EvalFailed(out.returncode, f"eval bins at {setting} exited {out.returncode}: {out.stderr.strip()}")
        return setting, json.loads(out.stdout)

    try:
        with ThreadPoolExecutor(2) as ex:
            results = list(ex.map(run, grid))
    except EvalFailed as e:
        # eval bins names the file, line and field; its exit status is passed on.
        print(f"error: {e.message}", file=sys.stderr)
        return e.status
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def weighted(users, method, metric):
        n = sum(u["snapshots"] for u in users)
        return sum(u["scores"][method][metric] * u["snapshots"] for u in users) / n

    rows = []
    for setting, report in results:
        users = sorted(report["users"], key=lambda u: u["user"])
        e = report["summary"]["engine"]
        rows.append({
            "stickiness": setting[0], "create_bin_below": setting[1], "merge_transition_weight": setting[2],
            "purity": e["purity"], "ami": e["ami"], "bins_per_user": e["bins_per_user"],
            "half_a_purity": weighted(users[0::2], "engine", "purity"), "half_a_ami": weighted(users[0::2], "engine", "ami"),
            "half_b_purity": weighted(users[1::2], "engine", "purity"), "half_b_ami": weighted(users[1::2], "engine", "ami"),
        })
    centre = next(r for (st, cb, tw), r in results if (st, cb, tw) == (s, c, t))
    summary = {}
    for key in ["purity", "ami", "bins_per_user", "half_a_purity", "half_a_ami", "half_b_purity", "half_b_ami"]:
        values = [r[key] for r in rows]
        summary[key] = {"mean": statistics.mean(values), "sd": statistics.pstdev(values), "min": min(values), "max": max(values)}
    out = {"centre": {"stickiness": s, "create_bin_below": c, "merge_transition_weight": t},
           "summary": summary, "baselines_at_centre": centre["summary"], "runs": rows}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"eval bins at 27 settings around stickiness {s:g}, create_bin_below {c:g}, merge_transition_weight {t:g}")
    print(f"{'figure':<16}{'mean':>8}{'sd':>8}{'min':>8}{'max':>8}")
    for key, v in summary.items():
        print(f"{key:<16}{v['mean']:8.4f}{v['sd']:8.4f}{v['min']:8.4f}{v['max']:8.4f}")
    print("baselines at the centre setting (purity / AMI):")
    for method, v in centre["summary"].items():
        if method != "engine":
            print(f"  {method:<22}{v['purity']:.4f} / {v['ami']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
