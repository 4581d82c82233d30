#!/usr/bin/env python3
"""Writes what `soundtrack eval bins` reads from a simulated population (`soundtrack simulate --out DIR`):
DIR/snapshots.jsonl (the snapshot of every event, in log order) and DIR/truth.csv (user,at,context: the
context the simulation was in at each snapshot's time, from DIR/truth.jsonl).

    scripts/sim-to-bins.py DIR
"""
import json
import sys

if len(sys.argv) != 2:
    sys.exit("usage: sim-to-bins.py DIR (the --out directory of soundtrack simulate)")
d = sys.argv[1]
truth = {}
with open(f"{d}/truth.jsonl", encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        if line.strip():
            t = json.loads(line)
            truth[t["event"]] = t
seen = set()
with open(f"{d}/events.jsonl", encoding="utf-8") as f, \
        open(f"{d}/snapshots.jsonl", "w", encoding="utf-8") as snaps, \
        open(f"{d}/truth.csv", "w", encoding="utf-8") as out:
    out.write("user,at,context\n")
    for n, line in enumerate(f, 1):
        if not line.strip():
            continue
        e = json.loads(line)
        s, t = e.get("snapshot"), truth.get(e["id"])
        if s is None or t is None:
            continue
        key = (s["user"], s["at"])
        if key in seen:  # one snapshot per user and time
            continue
        seen.add(key)
        snaps.write(json.dumps(s, separators=(",", ":")) + "\n")
        out.write(f"{s['user']},{s['at']},{t['context']}\n")
