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
  summarise("ok", summary, latency)
end
