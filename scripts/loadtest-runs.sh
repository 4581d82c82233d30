#!/usr/bin/env bash
# Runs scripts/loadtest.sh several times and tabulates the runs: on a shared 2-core machine one
# run's p99 moves by more than most changes do, so a load-test figure is a set of runs.
#
#   scripts/loadtest-runs.sh [RUNS] [USERS] [SECONDS] [CONNECTIONS]    defaults: 5 10000 20 32
#
# Environment: everything scripts/loadtest.sh reads (SOUNDTRACK_BIN, RATE, SERVE_ARGS, ...), and
# SOUNDTRACK_BIN_B: a second build, run alternately with the first (A B A B ...), each tabulated
# apart, as a paired comparison (it may be the same binary: SERVE_ARGS_B, when set, replaces
# SERVE_ARGS for build B, e.g. SERVE_ARGS_B=--no-fit against the background refit); OUT: the directory for each run's output and figures (default: a
# new directory under /tmp, printed). Each run starts after `sync`, so that the page cache's
# write-back of the run before does not fall into it.
#
# Prints, per build and phase, the minimum, median and maximum of the rate, the p99 and the
# service's CPU a request over the runs, and how many runs met the targets: picks offered at
# 10,000/s answered at p99 <= 10 ms; feedback >= 5,000 events/s at p99 <= 50 ms. Exits 1 when a
# run failed or its database did not hold exactly the acknowledged feedback.
set -euo pipefail
[[ -n "${OUT:-}" ]] && OUT=$(realpath -m "$OUT")  # before the cd below
cd "$(dirname "$0")/.."
RUNS=${1:-5}
[[ "$RUNS" =~ ^[0-9]+$ ]] || { echo "RUNS: a number, 1...100" >&2; exit 2; }
USERS=${2:-10000}
SECONDS_PER_PHASE=${3:-20}
CONNECTIONS=${4:-32}
(( RUNS >= 1 && RUNS <= 100 )) || { echo "RUNS: 1...100" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d /tmp/soundtrack-loadruns.XXXXXX)}
mkdir -p "$OUT"
rm -f "$OUT"/[AB]-*.result  # a directory used before: only this invocation's runs are tabulated
A=${SOUNDTRACK_BIN:-}
if [[ -z "$A" ]]; then
  for b in .build-server/release/soundtrack .build/release/soundtrack; do [[ -x $b ]] && { A=$b; break; }; done
fi
[[ -x "$A" ]] || { echo "build first: swift build -c release --product soundtrack" >&2; exit 2; }
B=${SOUNDTRACK_BIN_B:-}
[[ -z "$B" || -x "$B" ]] || { echo "SOUNDTRACK_BIN_B is not an executable: $B" >&2; exit 2; }
builds=(A)
[[ -n "$B" ]] && builds=(A B)

# The machine's speed, before and after the runs: the in-process pick of `soundtrack bench` (CPU
# only: no disk, no network, no other thread), three runs of 20,000 picks, their p50s in µs. The
# same code has run 1.6-2 times slower on some days than on others; a set of runs is read beside it.
# (The bench makes its own temporary database; its errors go to OUT/machine.err.)
machine_speed() {
  local p50s
  p50s=$("$A" bench pick --in-process-only --runs 3 --iterations 20000 2>>"$OUT/machine.err" \
    | awk '/^in-process pick/ {on = 1; next} on && $1 ~ /^[0-9]+$/ {printf "%s%s", sep, $2; sep = " / "} on && NF == 0 && sep {exit}') || true
  if [[ -n "$p50s" ]]; then echo "$p50s µs"; else echo "unavailable (the bench failed: $OUT/machine.err)"; fi
}
echo "runs: $RUNS of scripts/loadtest.sh $USERS $SECONDS_PER_PHASE $CONNECTIONS; outputs in $OUT"
rm -f "$OUT/machine.err"
speed_before=$(machine_speed)
echo "machine: in-process pick p50 $speed_before (bench pick --in-process-only, build A)" | tee "$OUT/machine.txt"
failed=0
for i in $(seq 1 "$RUNS"); do
  for tag in "${builds[@]}"; do
    bin=$A
    [[ $tag == B ]] && bin=$B
    sync
    result=$OUT/$tag-$i.result
    rm -f "$result"
    args=${SERVE_ARGS:-}
    [[ $tag == B ]] && args=${SERVE_ARGS_B-$args}
    if SERVE_ARGS=$args SOUNDTRACK_BIN=$bin RESULT_FILE=$result scripts/loadtest.sh "$USERS" "$SECONDS_PER_PHASE" "$CONNECTIONS" > "$OUT/$tag-$i.txt" 2>&1; then
      echo "run $i, build $tag: done"
    else
      echo "run $i, build $tag: FAILED (exit $?; see $OUT/$tag-$i.txt)"
      failed=1
    fi
  done
done

speed_after=$(machine_speed)
echo "machine: in-process pick p50 $speed_before before the runs, $speed_after after (the README's bench table, 2026-11-25: 26.6-26.9 µs)" | tee -a "$OUT/machine.txt"

status=0
python3 - "$OUT" "$A" "$B" "$RUNS" "${RATE:-10000}" <<'PY' || status=$?
import os, statistics, sys
out, a, b, runs, rate = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

def load(path):
    phases, busy, check = {}, {}, None
    for line in open(path):
        kv = dict(f.split("=", 1) for f in line.split())
        if "phase" in kv:
            phases[kv["phase"]] = {k: float(v) for k, v in kv.items() if k != "phase"}
        elif "committer" in kv:
            busy[kv["committer"]] = float(kv["busy_pct"])
        elif "check" in kv:
            check = kv["check"]
    return phases, busy, check

def spread(xs, fmt):
    if not xs:
        return "-"
    return "/".join(fmt % x for x in (min(xs), statistics.median(xs), max(xs)))

bad = 0
for tag, binary in (("A", a), ("B", b)):
    if not binary:
        continue
    paths = [os.path.join(out, f"{tag}-{i}.result") for i in range(1, runs + 1)]
    results = [load(p) for p in paths if os.path.exists(p)]
    print(f"\nbuild {tag}: {binary}, {len(results)} of {runs} runs with figures")
    print(f"{'phase':<10} {'per second (min/median/max)':>30} {'p99 ms (min/median/max)':>26} {'CPU µs/req (median)':>20} {'committer busy % (median)':>26}")
    for phase in ("warmup", "feedback0", "picks", "paced", "feedback"):
        rows = [r[0][phase] for r in results if phase in r[0]]
        if not rows:
            continue
        busy = [r[1][phase] for r in results if phase in r[1]]
        print(f"{phase:<10} {spread([x['rate'] for x in rows], '%.0f'):>30} {spread([x['p99_ms'] for x in rows], '%.2f'):>26} "
              f"{statistics.median(x['cpu_us'] for x in rows):>20.0f} {(statistics.median(busy) if busy else float('nan')):>26.1f}")
    paced = [r[0]["paced"] for r in results if "paced" in r[0]]
    feedback = [r[0]["feedback"] for r in results if "feedback" in r[0]]
    checks = [r[2] for r in results]
    if any(c != "ok" for c in checks):
        print("(runs whose database check failed are counted in the figures above too)")
    met_paced = sum(1 for x in paced if x["rate"] >= 9900 and x["p99_ms"] <= 10)
    met_feedback = sum(1 for x in feedback if x["rate"] >= 5000 and x["p99_ms"] <= 50)
    picks_target = (f"picks at 10,000/s with p99 <= 10 ms in {met_paced} of {len(paced)} runs" if rate == 10000
                    else "no picks offered at a fixed rate (RATE=0)" if rate == 0
                    else f"picks offered at {rate}/s, not the target's 10,000/s")
    print(f"targets: {picks_target}; feedback >= 5,000/s with p99 <= 50 ms in {met_feedback} of {len(feedback)} runs")
    ok = sum(1 for c in checks if c == "ok")
    print(f"the database held exactly the acknowledged feedback in {ok} of {len(checks)} runs")
    bad += len(checks) - ok + (runs - len(results))
sys.exit(1 if bad else 0)
PY
(( failed == 0 && status == 0 ))
