-- wrk script: POST /v1/picks for random users and contexts; writes counts to $SUMMARY_FILE.
package.path = os.getenv("LUA_DIR") .. "/?.lua;" .. package.path
require("common")

local requests

function init(args)
  load_inputs()
  requests = pick_requests("/v1/picks")
end

function request()
  return requests[math.random(#requests)]
end

function done(summary, latency, _)
  summarise_counts(summary, latency)
end
