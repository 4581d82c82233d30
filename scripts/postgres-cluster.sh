#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback, for the tests of the PostgreSQL store (issue 44).
#
#   bash scripts/postgres-cluster.sh start       # initdb into a temporary directory, start on a free port of
#                                                 # 127.0.0.1, create the database `soundtrack`; prints its URL
#   bash scripts/postgres-cluster.sh url         # prints the URL of the cluster `start` started
#   bash scripts/postgres-cluster.sh stop        # stops it and deletes its directory
#   bash scripts/postgres-cluster.sh run CMD…    # start, run CMD with SOUNDTRACK_TEST_POSTGRES_URL set, stop
#                                                 # (also when CMD fails or is interrupted); exits with CMD's status
#   bash scripts/postgres-cluster.sh install     # installs Debian's postgresql package when no server binaries
#                                                 # are found (.ci/run calls it, so CI fails where it cannot)
#
# The server's binaries come from PATH (initdb, pg_ctl) or the newest /usr/lib/postgresql/*/bin; when
# there are none, Debian's `postgresql` package is installed (as root, or through sudo). Where that
# cannot be done, `start` exits 3 and says why, and `run` runs CMD without the URL, saying so: the
# PostgreSQL tests then skip with that reason, and fail under CI=true (Tests/SoundtrackPostgresTests).
#
# As root the server runs as the user `postgres` (Debian's package creates it; initdb refuses root).
# The cluster listens on 127.0.0.1 only, its superuser `soundtrack` has a random password (scram-sha-256,
# in the URL), and it runs with fsync off: it lives for one test run, and what it would lose on a power
# cut is nothing anyone keeps. `start` and `stop` keep their state in $POSTGRES_CLUSTER_STATE (default
# out/postgres-cluster.state); `run` keeps its own, so it never touches a cluster `start` left running.
set -euo pipefail
cd "$(dirname "$0")/.."

STATE="${POSTGRES_CLUSTER_STATE:-$PWD/out/postgres-cluster.state}"
PG_USER_NAME=soundtrack
PG_DATABASE=soundtrack
UNAVAILABLE=3

say() { echo "postgres-cluster: $*" >&2; }

# The directory of initdb and pg_ctl (where their links lead): PATH first, then the newest of Debian's versioned directories.
find_bindir() {
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return 0
  fi
  local dir
  # The newest version whose directory has the server's tools (a version's client alone has not).
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

# Installs Debian's `postgresql` package; fails (with the reason on standard error) where it cannot.
install_postgresql() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      say "PostgreSQL is not installed and this user can neither install packages nor sudo"
      return 1
    fi
  fi
  command -v apt-get >/dev/null 2>&1 || { say "PostgreSQL is not installed and there is no apt-get here"; return 1; }
  say "installing Debian's postgresql package"
  $sudo apt-get update -qq >&2 || { say "apt-get update failed"; return 1; }
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || { say "apt-get install postgresql failed"; return 1; }
}

# Runs a command as the server's user: `postgres` when we are root, else ourselves.
as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

read_state() {
  [ -f "$STATE" ] || { say "no cluster started ($STATE missing): run '$0 start' first"; exit 1; }
  # shellcheck disable=SC1090
  . "$STATE"
}

start() {
  if [ -f "$STATE" ]; then
    say "a cluster is already started ($STATE): stop it first"
    exit 1
  fi
  local bindir
  if ! bindir="$(find_bindir)"; then
    install_postgresql || exit "$UNAVAILABLE"
    bindir="$(find_bindir)" || { say "PostgreSQL was installed but neither PATH nor /usr/lib/postgresql/*/bin has initdb and pg_ctl"; exit "$UNAVAILABLE"; }
  fi
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    say "running as root, and there is no user 'postgres' to run the server as (Debian's postgresql package creates it)"
    exit "$UNAVAILABLE"
  fi
  local began=$SECONDS dir password port log tries
  dir="$(mktemp -d "${TMPDIR:-/tmp}/soundtrack-pg.XXXXXX")" || { say "mktemp failed"; exit 1; }
  chmod 700 "$dir" && mkdir "$dir/sock" || { rm -rf "$dir"; say "could not prepare $dir"; exit 1; }
  password="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  printf '%s\n' "$password" >"$dir/pwfile"
  [ "$(id -u)" -ne 0 ] || chown -R postgres: "$dir" || { rm -rf "$dir"; say "could not give $dir to the user postgres"; exit 1; }
  if ! as_server_user "$bindir/initdb" -D "$dir/data" -U "$PG_USER_NAME" --pwfile="$dir/pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 --no-sync >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    say "initdb failed"
    exit 1
  fi
  rm -f "$dir/pwfile"
  log="$dir/server.log"
  # A free port: a random one nothing answers on, tried again when the server cannot bind it (another
  # process may take it between the check and the start).
  for tries in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 40000))
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then port=""; continue; fi
    if as_server_user "$bindir/pg_ctl" -D "$dir/data" -l "$log" -w -t 60 -s \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/sock -c fsync=off -c full_page_writes=off" start; then
      break
    fi
    if grep -q "could not bind\|Address already in use" "$log" 2>/dev/null && [ "$tries" -lt 10 ]; then
      port=""
      continue
    fi
    cat "$log" >&2 2>/dev/null || true
    as_server_user "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop >/dev/null 2>&1 || true  # a start that timed out may still come up
    rm -rf "$dir"
    say "the server did not start"
    exit 1
  done
  [ -n "$port" ] || { rm -rf "$dir"; say "found no free port"; exit 1; }
  local createdb="$bindir/createdb"
  [ -x "$createdb" ] || createdb="$(command -v createdb || echo createdb)"
  if ! PGPASSWORD="$password" "$createdb" -h 127.0.0.1 -p "$port" -U "$PG_USER_NAME" "$PG_DATABASE"; then
    as_server_user "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop || true
    rm -rf "$dir"
    say "createdb failed"
    exit 1
  fi
  local url="postgres://$PG_USER_NAME:$password@127.0.0.1:$port/$PG_DATABASE?sslmode=disable"
  # Checked one by one: `run` calls this inside $(…) with errexit off.
  if ! mkdir -p "$(dirname "$STATE")" || ! (umask 077 && printf 'PG_BINDIR=%q\nPG_DIR=%q\nPG_URL=%q\n' "$bindir" "$dir" "$url" >"$STATE"); then
    as_server_user "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop || true
    rm -rf "$dir"
    say "could not write the cluster's state to $STATE"
    exit 1
  fi
  say "PostgreSQL $("$bindir/pg_ctl" --version | awk "{print \$3}") on 127.0.0.1:$port, in $dir ($((SECONDS - began)) s)"
  echo "$url"
}

stop() {
  read_state
  as_server_user "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 60 -s stop || say "pg_ctl stop failed; deleting the directory anyway"
  rm -rf "$PG_DIR"
  rm -f "$STATE"
}

run() {
  (($# > 0)) || { say "run: no command given"; exit 2; }
  STATE="$(mktemp -u "${TMPDIR:-/tmp}/soundtrack-pg-run.XXXXXX")"
  local url status=0
  set +e
  url="$(start)"
  status=$?
  set -e
  if [ "$status" -eq 0 ]; then
    trap 'stop' EXIT
    trap 'exit 130' INT TERM
    SOUNDTRACK_TEST_POSTGRES_URL="$url" "$@" || status=$?
    exit "$status"
  elif [ "$status" -eq "$UNAVAILABLE" ]; then
    say "no PostgreSQL here (above): running without SOUNDTRACK_TEST_POSTGRES_URL; its tests skip (and fail under CI=true)"
    unset SOUNDTRACK_TEST_POSTGRES_URL
    "$@"
  else
    exit "$status"
  fi
}

case "${1:-}" in
  start) start ;;
  install)
    if bindir="$(find_bindir)"; then
      say "found $("$bindir/pg_ctl" --version) in $bindir"
    else
      install_postgresql || exit "$UNAVAILABLE"
      find_bindir >/dev/null || { say "PostgreSQL was installed but neither PATH nor /usr/lib/postgresql/*/bin has initdb and pg_ctl"; exit "$UNAVAILABLE"; }
    fi
    ;;
  url)
    read_state
    echo "$PG_URL"
    ;;
  stop) stop ;;
  run)
    shift
    run "$@"
    ;;
  *)
    echo "usage: $0 start|url|stop|run CMD…|install" >&2
    exit 2
    ;;
esac
