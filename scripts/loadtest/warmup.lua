-- wrk script: POST /v1/picks for every user once in each of the four daily contexts (context by
-- context, user by user); when every one is answered, it stops sending and creates $DONE_FILE
-- (loadtest.sh then stops wrk). One wrk thread. Writes counts to $SUMMARY_FILE.
package.path = os.getenv("LUA_DIR") .. "/?.lua;" .. package.path
require("common")

ok, failed, answered, sent = 0, 0, 0, 0
local mine = {}

function init(args)
  load_inputs()
  for i = 1, #users do mine[i] = i end
  total = #mine * 4
end

function request()
  -- Past `total` (requests still in flight when the last answers come), repeat from the start.
  local k = sent % total
  sent = sent + 1
  local i = mine[(k % #mine) + 1]
  return wrk.format("POST", "/v1/picks", headers(i), snapshot(users[i], math.floor(k / #mine) + 1))
end

function response(status, hdrs, body)
  if status == 200 then ok = ok + 1 else failed = failed + 1 end
  answered = answered + 1
  if answered == total then
    io.open(os.getenv("DONE_FILE"), "w"):close()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  summarise("ok", summary, latency)
end
