#!/usr/bin/env bash
# The SQLite work of one replay block, done by the sqlite3 shell alone (no Soundtrack code): how fast
# replay could be if everything but SQLite took no time at all.
#
#   scripts/replay-sqlite-floor.sh POPULATION.sqlite [BINS] [EVENTS] [RUNS]
#
# On a copy of POPULATION (a database of `soundtrack bench replay`, or any Soundtrack database with
# users and bins), in one transaction with the settings replay uses (WAL, synchronous=FULL, a
# 256 MiB page cache, no automatic checkpoint, foreign keys on): BINS random bins get new vectors
# of the same size (what feedback does to a bin), every user's weights get a new vector, and
# EVENTS feedback rows are inserted, spread over the users; then COMMIT and a checkpoint.
# Defaults: 44,589 bins and 80,000 events, what one 64 MiB block of `bench replay --users 10000`
# changes. Prints sqlite3's timer for each statement, RUNS times (default 3). SYNCHRONOUS=NORMAL
# in the environment shows what commits that are not durable (WAL without a sync per commit) would
# cost instead.
set -euo pipefail
db=${1:?usage: $0 POPULATION.sqlite [BINS] [EVENTS] [RUNS]}
bins=${2:-44589}
events=${3:-80000}
runs=${4:-3}
synchronous=${SYNCHRONOUS:-FULL}
[ -f "$db" ] || { echo "error: POPULATION: expected a database file, got '$db' (no such file)" >&2; exit 2; }
for arg in "BINS=$bins" "EVENTS=$events" "RUNS=$runs"; do
  [[ ${arg#*=} =~ ^[1-9][0-9]*$ ]] || { echo "error: ${arg%%=*}: expected a whole number ≥ 1, got '${arg#*=}'" >&2; exit 2; }
done
[[ $synchronous =~ ^(FULL|NORMAL)$ ]] || { echo "error: SYNCHRONOUS: expected FULL or NORMAL, got '$synchronous'" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "error: needs the sqlite3 shell (apt-get install sqlite3)" >&2; exit 1; }
for table in users bins weights feedback; do
  [ "$(sqlite3 "$db" "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '$table'")" = 1 ] ||
    { echo "error: POPULATION: expected a Soundtrack database with a '$table' table, got '$db'" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for run in $(seq 1 "$runs"); do
  cp "$db" "$work/floor.sqlite"
  sync "$work/floor.sqlite"
  echo "run $run: $bins bins, $events feedback rows, synchronous=$synchronous"
  sqlite3 -bail "$work/floor.sqlite" <<SQL | grep "Run Time" | paste -d' ' <(printf '%s\n' "  update bins    " "  update weights " "  insert feedback" "  commit         " "  checkpoint     ") -
PRAGMA journal_mode=WAL;
PRAGMA synchronous=$synchronous;
PRAGMA cache_size=-262144;
PRAGMA wal_autocheckpoint=0;
PRAGMA foreign_keys=ON;
CREATE TEMP TABLE chosen AS SELECT id FROM bins ORDER BY random() LIMIT $bins;
CREATE TEMP TABLE numbered (n INTEGER PRIMARY KEY, id TEXT NOT NULL);
INSERT INTO temp.numbered (n, id) SELECT row_number() OVER (ORDER BY id) - 1, id FROM users;
BEGIN;
.timer on
UPDATE bins SET centroid = randomblob(length(centroid)), spread = randomblob(length(spread)),
    observed = randomblob(length(observed)), observations = observations + 1, updated_at = updated_at + 1
    WHERE id IN (SELECT id FROM temp.chosen);
UPDATE weights SET vector = randomblob(length(vector));
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < $events - 1)
INSERT INTO feedback (id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq)
    SELECT 'floor-' || i, (SELECT id FROM temp.numbered WHERE n = i % (SELECT count(*) FROM temp.numbered)),
           1773000000.0 + i, 'spotify:track:58QhkbaAkLFnn7JwAnAato', 'like', 38227, NULL, 3, NULL, NULL, 1000000 + i
    FROM c;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
done
