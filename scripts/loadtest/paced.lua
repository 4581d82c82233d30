-- wrk script: POST /v1/picks like picks.lua, but offered at a fixed rate ($RATE requests a second
-- over all wrk threads) instead of as fast as the service answers, so the latency is measured at
-- that load, not at saturation. Each thread keeps a schedule of send times; a connection whose
-- answer came back waits for the next free slot. When every connection is busy the schedule falls
-- behind and requests go out at once until it catches up (open loop: slowness is not hidden by
-- sending less); `late` counts the sends more than 1 ms behind schedule, `max_lag_us` the worst.
-- $PICK_PATH replaces the path (for example /v1/picks?learn=false: picks without the writer).
package.path = os.getenv("LUA_DIR") .. "/?.lua;" .. package.path
require("common")
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } soundtrack_timespec;
  int clock_gettime(int clock, soundtrack_timespec *ts);
]]
local ts = ffi.new("soundtrack_timespec")
local function now_s()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

late, max_lag_us, sends = 0, 0, 0
-- How late each send was, in 0.1 ms buckets (the last one: 100 ms or more).
lag_hist = {}
for b = 0, 1000 do lag_hist[b] = 0 end
local period, next_at, requests

function init(args)
  load_inputs()
  requests = pick_requests(os.getenv("PICK_PATH") or "/v1/picks")
  period = tonumber(os.getenv("THREADS") or "1") / tonumber(os.getenv("RATE"))
end

function delay()
  -- wrk waits whole milliseconds: the send goes out in the millisecond of its slot.
  local now = now_s()
  next_at = (next_at or now) + period
  local wait = next_at - now
  sends = sends + 1
  if wait < 0 then
    local b = math.min(1000, math.floor(-wait * 1e4))
    lag_hist[b] = lag_hist[b] + 1
  else
    lag_hist[0] = lag_hist[0] + 1
  end
  if wait < -0.001 then
    late = late + 1
    max_lag_us = math.max(max_lag_us, math.floor(-wait * 1e6))
  end
  return wait > 0 and math.floor(wait * 1000) or 0
end

function request()
  return requests[math.random(#requests)]
end

-- A bound on the p99 that counts the lateness of sends (coordinated omission): at least 99.5 % of
-- sends were at most `lag` late and at least 99.5 % of answers took at most `p99.5`, so at least
-- 99 % of requests took at most their sum from their scheduled time.
function done(summary, latency, _)
  local hist, total = {}, 0
  for b = 0, 1000 do hist[b] = 0 end
  for _, h in ipairs(gather("lag_hist")) do
    for b = 0, 1000 do hist[b] = hist[b] + (h[b] or 0) end
  end
  for b = 0, 1000 do total = total + hist[b] end
  local seen, lag995 = 0, 0
  for b = 0, 1000 do
    seen = seen + hist[b]
    if seen >= 0.995 * total then lag995 = (b + 1) * 100; break end
  end
  summarise_counts(summary, latency, {
    late = sum("late"), max_lag_us = max_of("max_lag_us"), lag995_us = lag995,
    p995_us = latency:percentile(99.5), p99_bound_us = lag995 + latency:percentile(99.5),
  })
end
