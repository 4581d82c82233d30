#!/usr/bin/env bash
# Idle connections against the release build of `soundtrack serve` on loopback:
#
#   scripts/idle-connections.sh [COUNT]        default 10000
#
# Starts the service on a fresh database with the small catalog (--shutdown-delay 1,
# --drain-timeout 2, --idle-timeout 60, so that the idle timeout does not close them first), opens
# COUNT TCP connections that send nothing, checks that /healthz still answers, sends SIGTERM and
# prints how long the process took to exit and its status. Fails (exit 1) when it is not answering,
# when it exits non-zero, or when it takes longer than the delay and the drain timeout plus 3 s.
# Environment: SOUNDTRACK_BIN (default .build/release/soundtrack), PORT (default 18191).
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-10000}
PORT=${PORT:-18191}
BIN=${SOUNDTRACK_BIN:-.build/release/soundtrack}
[[ -x "$BIN" ]] || { echo "build first: swift build -c release --product soundtrack" >&2; exit 2; }
(( COUNT >= 1 && COUNT <= 60000 )) || { echo "COUNT: 1...60000" >&2; exit 2; }
# Each side needs a descriptor per connection.
ulimit -n $(( $(ulimit -Hn) < COUNT + 1000 ? $(ulimit -Hn) : COUNT + 1000 ))
(( $(ulimit -n) >= COUNT + 100 )) || { echo "the file limit ($(ulimit -n)) is below $COUNT connections" >&2; exit 2; }

WORK=$(mktemp -d /tmp/soundtrack-idle.XXXXXX)
SERVER_PID=
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then kill -KILL "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
"$BIN" catalog import datasets/catalog-small.csv --db "$WORK/idle.sqlite" > /dev/null
"$BIN" serve --db "$WORK/idle.sqlite" --host 127.0.0.1 --port "$PORT" --idle-timeout 60 --shutdown-delay 1 --drain-timeout 2 \
  2> "$WORK/serve.log" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/serve.log" 2>/dev/null && break; sleep 0.1; done

python3 - "$PORT" "$COUNT" "$SERVER_PID" <<'PY'
import os, signal, socket, sys, time
port, count, pid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
t0 = time.time()
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
print(f"opened {len(idle)} idle connections in {time.time() - t0:.1f} s")
probe = socket.create_connection(("127.0.0.1", port), timeout=10)
probe.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
answer = probe.recv(64)
print("GET /healthz with them open:", answer.split(b"\r\n")[0].decode())
if not answer.startswith(b"HTTP/1.1 200"):
    sys.exit(1)
t0 = time.time()
os.kill(pid, signal.SIGTERM)
# The parent shell reaps the process; here its state in /proc tells when it has exited.
while os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split(") ")[1][0] != "Z":
    time.sleep(0.02)
took = time.time() - t0
print(f"exited {took:.2f} s after SIGTERM (shutdown delay 1 s + drain timeout 2 s)")
sys.exit(0 if took < 6 else 1)
PY
status=0
wait "$SERVER_PID" || status=$?
SERVER_PID=
echo "serve exited with status $status"
exit $(( status == 0 ? 0 : 1 ))
