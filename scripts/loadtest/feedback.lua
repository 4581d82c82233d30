-- wrk script: POST /v1/feedback, one event per request with a fresh id and an embedded snapshot;
-- counts the acknowledged ("applied") events and writes them to $SUMMARY_FILE.
package.path = os.getenv("LUA_DIR") .. "/?.lua;" .. package.path
require("common")

acked, failed, n = 0, 0, 0
local signals = { "like", "like", "complete", "dislike", "skip" }

function init(args)
  load_inputs()
end

function request()
  n = n + 1
  local i = math.random(#users)
  local body = string.format(
    '{"id":"%s-%d-%d","user":"%s","at":"2026-03-16T08:12:00+01:00","track":"%s","signal":"%s","snapshot":%s}',
    os.getenv("RUN_ID"), tid, n, users[i], tracks[math.random(#tracks)], signals[math.random(#signals)], snapshot(users[i]))
  return wrk.format("POST", "/v1/feedback", headers(i), body)
end

function response(status, hdrs, body)
  if status == 200 and body:find('"status":"applied"', 1, true) then acked = acked + 1 else failed = failed + 1 end
end

function done(summary, latency, requests)
  summarise("acked", summary, latency)
end
