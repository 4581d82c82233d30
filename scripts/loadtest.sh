#!/usr/bin/env bash
# Load test of `soundtrack serve` on loopback with wrk (apt-get install wrk).
#
#   scripts/loadtest.sh [USERS] [SECONDS] [CONNECTIONS]      defaults: 10000 20 32
#
# Creates a fresh database with the bundled 20k catalog, USERS users and one key each, starts
# the release build of the service on 127.0.0.1, warms every user up (one pick of each user in
# each of the four contexts the picks use: this loads every user's state and creates the bins, so
# the measured phases run on known users, as a service does once its users are back), then runs
# picks and feedback for SECONDS each, stops the service with SIGTERM, and checks
# that the database holds exactly the feedback events the service acknowledged (counted by the
# service: wrk drops the replies still in flight when its time is up).
# Environment: SOUNDTRACK_BIN (default .build-server/release/soundtrack, else .build/release/soundtrack),
# PORT (default 18080), THREADS (wrk threads, default 1), KEEP=1 keeps the work directory,
# RATE (default 10000; 0 skips): after the picks at full speed, picks offered at RATE a second
# (scripts/loadtest/paced.lua) over PACED_CONNECTIONS (default 256: enough idle connections that a
# slow answer does not hold the next sends back), the latency at that load rather than at saturation,
# PERF=PHASE (warmup, picks, paced or feedback) records `perf record -g` (PERF_CALLGRAPH="-F 499 --call-graph dwarf" for
# stacks through libraries without frame pointers) of the service during that phase
# into the work directory (implies KEEP=1), SERVE_ARGS adds options to `serve`, LOAD_BASE (default /tmp)
# is where the work directory and its database go (/dev/shm takes the disk out of the measurement),
# FEEDBACK_FIRST=1 runs a feedback phase right after the warm-up as well, so that the blend's
# background refit (`serve --blend-refit-s`) falls into the picks phases that follow,
# STOP=KILL ends the service with SIGKILL instead of SIGTERM and times the catch-up of the next command.
# RESULT_FILE=PATH appends the figures as key=value lines (one line a phase, the committer's busy
# share, the final check) for scripts/loadtest-runs.sh, which repeats the test and tabulates the runs.
# The last column is the service's own CPU time (user + system, from /proc) per request.
set -euo pipefail
[[ -n "${RESULT_FILE:-}" ]] && RESULT_FILE=$(realpath -m "$RESULT_FILE")  # before the cd below
cd "$(dirname "$0")/.."
USERS=${1:-10000}
SECONDS_PER_PHASE=${2:-20}
CONNECTIONS=${3:-32}
THREADS=${THREADS:-1}
RATE=${RATE:-10000}
PACED_CONNECTIONS=${PACED_CONNECTIONS:-256}
PORT=${PORT:-18080}
BIN=${SOUNDTRACK_BIN:-}
if [[ -z "$BIN" ]]; then
  for b in .build-server/release/soundtrack .build/release/soundtrack; do [[ -x $b ]] && { BIN=$b; break; }; done
fi
[[ -x "$BIN" ]] || { echo "build first: swift build -c release --product soundtrack" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 2; }
(( USERS >= 1 && USERS <= 100000 && SECONDS_PER_PHASE >= 1 && SECONDS_PER_PHASE <= 300 )) || { echo "bounds: 1..100000 users, 1..300 s" >&2; exit 2; }

WORK=$(mktemp -d "${LOAD_BASE:-/tmp}/soundtrack-load.XXXXXX")
DB=$WORK/load.sqlite
SERVER_PID=
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true; fi
  [[ "${KEEP:-0}" == 1 ]] && echo "work directory: $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

echo "== setup: $USERS users and keys in $DB"
t0=$(date +%s.%N)
seq -f "load-%06g" 1 "$USERS" > "$WORK/users.txt"
"$BIN" keys create --users-file "$WORK/users.txt" --add-users --db "$DB" > "$WORK/keys.tsv"
python3 - "$DB" > "$WORK/tracks.txt" <<'PY'
import sqlite3, sys
for (i,) in sqlite3.connect(sys.argv[1]).execute("SELECT id FROM songs ORDER BY id LIMIT 200"):
    print(i)
PY
printf "   %.1f s\n" "$(echo "$(date +%s.%N) - $t0" | bc)"

"$BIN" serve --db "$DB" --host 127.0.0.1 --port "$PORT" --rate 1000 --log-level notice ${SERVE_ARGS:-} 2> "$WORK/serve.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null || { cat "$WORK/serve.log"; exit 1; }
head -1 "$WORK/serve.log"

export KEYS_FILE=$WORK/keys.tsv TRACKS_FILE=$WORK/tracks.txt LUA_DIR=$PWD/scripts/loadtest RUN_ID=run$$ RATE THREADS
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }  # the service's user + system CPU, in clock ticks
metric() { sed -n "s/^$2 //p" "$1" | head -1; }
run() {  # phase script seconds [connections] (the warm-up stops by itself when every user had its picks)
  local before after perf_pid= conns=${4:-$CONNECTIONS}
  curl -fs "http://127.0.0.1:$PORT/metrics" > "$WORK/$1.metrics.before"
  if [[ "${PERF:-}" == "$1" ]]; then
    KEEP=1
    perf record -q ${PERF_CALLGRAPH:--g} -p "$SERVER_PID" -o "$WORK/perf.data" 2> "$WORK/perf.log" &
    perf_pid=$!
  fi
  before=$(cpu_ticks)
  if [[ "$2" == warmup ]]; then  # one thread; stopped (SIGINT: wrk then reports) once every pick is answered
    SUMMARY_FILE=$WORK/$1.summary DONE_FILE=$WORK/$1.done wrk -t1 -c"$CONNECTIONS" -d"$3"s --timeout 5s --latency \
      -s "scripts/loadtest/$2.lua" "http://127.0.0.1:$PORT" > "$WORK/$1.wrk" &
    local wrk_pid=$!
    while kill -0 "$wrk_pid" 2>/dev/null && [[ ! -e "$WORK/$1.done" ]]; do sleep 0.1; done
    kill -INT "$wrk_pid" 2>/dev/null || true
    wait "$wrk_pid"
  else
    local TIMEFORMAT="%U %S"  # wrk's own CPU: it shares the cores with the service
    { time SUMMARY_FILE=$WORK/$1.summary wrk -t"$THREADS" -c"$conns" -d"$3"s --timeout 5s --latency -s "scripts/loadtest/$2.lua" "http://127.0.0.1:$PORT" > "$WORK/$1.wrk"; } 2> "$WORK/$1.wrktime"
    echo "wrk_cpu_s=$(awk '{print $1 + $2}' "$WORK/$1.wrktime")" >> "$WORK/$1.summary"
  fi
  after=$(cpu_ticks)
  [[ -n "$perf_pid" ]] && { kill -INT "$perf_pid"; wait "$perf_pid" || true; }
  echo "cpu_ticks=$((after - before))" >> "$WORK/$1.summary"
  curl -fs "http://127.0.0.1:$PORT/metrics" > "$WORK/$1.metrics.after"
  local m
  for m in soundtrack_write_batches_total soundtrack_writes_committed_total soundtrack_commit_duration_seconds_sum soundtrack_bins_created_total soundtrack_blend_refits_total; do
    echo "$m=$(echo "$(metric "$WORK/$1.metrics.after" "$m") - $(metric "$WORK/$1.metrics.before" "$m")" | bc -l)" >> "$WORK/$1.summary"
  done
}
echo "== warm-up: every user once in each of the four contexts ($((USERS * 4)) picks; first picks create the bins)"
run warmup warmup 600
if [[ "${FEEDBACK_FIRST:-0}" == 1 ]]; then  # queries for the blend's refit wait while the picks phases run
  echo "== feedback first: ${SECONDS_PER_PHASE}s, $CONNECTIONS connections, one event a request"
  RUN_ID=run$$-first
  run feedback0 feedback "$SECONDS_PER_PHASE"
  RUN_ID=run$$  # the later phase's event ids stay unique
fi
echo "== picks: ${SECONDS_PER_PHASE}s, $CONNECTIONS connections"
run picks picks "$SECONDS_PER_PHASE"
if (( RATE > 0 )); then
  echo "== picks offered at $RATE a second: ${SECONDS_PER_PHASE}s, $PACED_CONNECTIONS connections"
  run paced paced "$SECONDS_PER_PHASE" "$PACED_CONNECTIONS"
fi
echo "== feedback: ${SECONDS_PER_PHASE}s, $CONNECTIONS connections, one event a request"
run feedback feedback "$SECONDS_PER_PHASE"
sleep 1  # requests wrk abandoned when its time was up still finish on the server
curl -fs "http://127.0.0.1:$PORT/metrics" > "$WORK/metrics.txt"
server_acked=$(metric "$WORK/metrics.txt" 'soundtrack_feedback_events_total{result="applied"}')

if [[ "${STOP:-TERM}" == KILL ]]; then
  echo "== SIGKILL, then \`users list\` brings the users' states up to date (the catch-up)"
  kill -KILL "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
  status=0
  behind=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*), count(DISTINCT user_id) FROM pending_events').fetchone())" "$DB")
  if [[ "${KEEP:-0}" == 1 ]]; then  # the database as the kill left it, to time the catch-up again
    mkdir -p "$WORK/killed" && cp "$DB"* "$WORK/killed/"
  fi
  t0=$(date +%s.%N)
  "$BIN" users list --db "$DB" --log-level notice > /dev/null 2> "$WORK/catchup.log"
  printf "   (events, users) behind the view %s, caught up in %.2f s; left behind: %s\n" "$behind" "$(echo "$(date +%s.%N) - $t0" | bc)" \
    "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM pending_events').fetchone()[0])" "$DB")"
else
  echo "== SIGTERM"
  kill -TERM "$SERVER_PID"
  status=0; wait "$SERVER_PID" || status=$?
  SERVER_PID=
  echo "   serve exited with status $status"
fi

get() { sed -n "s/^$2=//p" "$WORK/$1.summary"; }
stored=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM feedback').fetchone()[0])" "$DB")
picks_stored=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM picks').fetchone()[0])" "$DB")
record() {  # a key=value line for RESULT_FILE, when one is asked for
  if [[ -n "${RESULT_FILE:-}" ]]; then echo "$1" >> "$RESULT_FILE"; fi
}
row() {  # phase label
  local ok failed errors dur p50 p99 max ticks
  ok=$(get "$1" ok); failed=$(get "$1" failed); errors=$(get "$1" errors); dur=$(get "$1" duration_us)
  p50=$(get "$1" p50_us); p99=$(get "$1" p99_us); max=$(get "$1" max_us)
  ticks=$(get "$1" cpu_ticks)
  local rate p50ms p99ms maxms cpu
  rate=$(echo "$ok / ($dur / 1000000)" | bc -l); p50ms=$(echo "$p50 / 1000" | bc -l); p99ms=$(echo "$p99 / 1000" | bc -l)
  maxms=$(echo "$max / 1000" | bc -l); cpu=$(echo "$ticks * 1000000 / $(getconf CLK_TCK) / ($ok + $failed + 1)" | bc -l)
  printf "%-10s %10d %8d %8d %12.0f %9.2f %9.2f %9.2f %14.0f\n" "$2" "$ok" "$failed" "$errors" "$rate" "$p50ms" "$p99ms" "$maxms" "$cpu"
  record "$(printf "phase=%s ok=%d non200=%d sockerr=%d rate=%.1f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f cpu_us=%.1f" \
    "$1" "$ok" "$failed" "$errors" "$rate" "$p50ms" "$p99ms" "$maxms" "$cpu")"
}
echo
echo "users $USERS, $CONNECTIONS connections, ${SECONDS_PER_PHASE}s a phase, $(nproc) cores, $("$BIN" --version)"
printf "%-10s %10s %8s %8s %12s %9s %9s %9s %14s\n" phase ok non-200 sockerr "per second" "p50 ms" "p99 ms" "max ms" "CPU µs/req"
row warmup warm-up
PHASES="warmup"
if [[ "${FEEDBACK_FIRST:-0}" == 1 ]]; then
  row feedback0 "feedback 1"
  PHASES="$PHASES feedback0"
fi
row picks picks
PHASES="$PHASES picks"
if (( RATE > 0 )); then
  row paced "picks@rate"
  PHASES="$PHASES paced"
fi
PHASES="$PHASES feedback"
row feedback feedback
echo
printf "%-10s %12s %12s %18s %14s %18s %14s\n" phase "bins made" "commits" "writes a commit" "committer busy %" "wrk CPU % of a core" "blend refits"
for p in $PHASES; do
  batches=$(get $p soundtrack_write_batches_total)
  wrk_cpu=$(get $p wrk_cpu_s)
  busy=$(echo "100 * $(get $p soundtrack_commit_duration_seconds_sum) / ($(get $p duration_us) / 1000000)" | bc -l)
  printf "%-10s %12.0f %12.0f %18.1f %14.1f %18s %14.0f\n" "$p" "$(get $p soundtrack_bins_created_total)" "$batches" \
    "$(echo "$(get $p soundtrack_writes_committed_total) / ($batches + 0.000001)" | bc -l)" "$busy" \
    "$([[ -n "$wrk_cpu" ]] && printf "%.0f" "$(echo "100 * $wrk_cpu / ($(get $p duration_us) / 1000000)" | bc -l)" || echo -)" \
    "$(get $p soundtrack_blend_refits_total)"
  record "$(printf "committer=%s busy_pct=%.1f" "$p" "$busy")"
done
if (( RATE > 0 )); then
  echo
  printf "picks@rate: offered %d a second; p99.9 %.2f ms; %d sends more than 1 ms behind schedule (worst %.1f ms)\n" \
    "$RATE" "$(echo "$(get paced p999_us) / 1000" | bc -l)" "$(get paced late)" "$(echo "$(get paced max_lag_us) / 1000" | bc -l)"
  printf "            p99 counting late sends (coordinated omission) at most %.2f ms: 99.5 %% of sends at most %.1f ms late, p99.5 %.2f ms\n" \
    "$(echo "$(get paced p99_bound_us) / 1000" | bc -l)" "$(echo "$(get paced lag995_us) / 1000" | bc -l)" "$(echo "$(get paced p995_us) / 1000" | bc -l)"
fi
acked=$(get feedback ok)
[[ "${FEEDBACK_FIRST:-0}" == 1 ]] && acked=$((acked + $(get feedback0 ok)))
echo
echo "feedback: acknowledged by the service $server_acked, received by wrk $acked (wrk drops the replies in flight when its time is up)"
echo "          in the database $stored; picks in the database $picks_stored"
in_flight=$CONNECTIONS  # at most one reply in flight a connection when a feedback phase's time is up
[[ "${FEEDBACK_FIRST:-0}" == 1 ]] && in_flight=$((2 * CONNECTIONS))
if [[ "$server_acked" == "$stored" && "$status" == 0 ]] && (( acked <= server_acked && server_acked - acked <= in_flight )); then
  echo "OK: the database holds exactly the acknowledged events"
  record "check=ok"
else
  echo "MISMATCH"
  record "check=mismatch"
  exit 1
fi
