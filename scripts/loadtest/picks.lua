-- wrk script: POST /v1/picks for random users and contexts; writes counts to $SUMMARY_FILE.
package.path = os.getenv("LUA_DIR") .. "/?.lua;" .. package.path
require("common")

ok, failed = 0, 0

function init(args)
  load_inputs()
end

function request()
  local i = math.random(#users)
  return wrk.format("POST", "/v1/picks", headers(i), snapshot(users[i]))
end

function response(status, hdrs, body)
  if status == 200 then ok = ok + 1 else failed = failed + 1 end
end

function done(summary, latency, requests)
  write_summary(os.getenv("SUMMARY_FILE"), {
    ok = sum("ok"), failed = sum("failed"), errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    duration_us = summary.duration, p50_us = latency:percentile(50), p99_us = latency:percentile(99), max_us = latency.max,
  })
end
