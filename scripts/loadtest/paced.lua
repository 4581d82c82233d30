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

ok, failed, late, max_lag_us = 0, 0, 0, 0
local period, next_at

function init(args)
  load_inputs()
  period = tonumber(os.getenv("THREADS") or "1") / tonumber(os.getenv("RATE"))
end

function delay()
  -- wrk waits whole milliseconds: the send goes out in the millisecond of its slot.
  local now = now_s()
  next_at = (next_at or now) + period
  local wait = next_at - now
  if wait < -0.001 then
    late = late + 1
    max_lag_us = math.max(max_lag_us, math.floor(-wait * 1e6))
  end
  return wait > 0 and math.floor(wait * 1000) or 0
end

function request()
  local i = math.random(#users)
  return wrk.format("POST", os.getenv("PICK_PATH") or "/v1/picks", headers(i), snapshot(users[i]))
end

function response(status, hdrs, body)
  if status == 200 then ok = ok + 1 else failed = failed + 1 end
end

function done(summary, latency, requests)
  summarise("ok", summary, latency, { late = sum("late"), max_lag_us = max_of("max_lag_us") })
end
