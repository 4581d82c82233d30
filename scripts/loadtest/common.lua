-- Shared by picks.lua and feedback.lua: users and keys from $KEYS_FILE ("user<TAB>key" lines),
-- track ids from $TRACKS_FILE, four daily contexts, per-thread ids.
users, keys, tracks = {}, {}, {}
local threads = {}
local contexts = {
  { "2026-03-16T08:10:00+01:00", "library", "stationary", 0, "study", "focused" },
  { "2026-03-16T18:20:00+01:00", "gym", "running", 160, "workout", "energetic" },
  { "2026-03-16T07:35:00+01:00", "commute", "automotive", 0, "travel", "calm" },
  { "2026-03-16T21:40:00+01:00", "home", "stationary", 0, "rest", "relaxed" },
}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function load_inputs()
  for line in io.lines(os.getenv("KEYS_FILE")) do
    local u, k = line:match("^([^\t]+)\t([^\t]+)$")
    if u then users[#users + 1] = u; keys[#keys + 1] = k end
  end
  for line in io.lines(os.getenv("TRACKS_FILE")) do
    if #line > 0 then tracks[#tracks + 1] = line end
  end
  math.randomseed(1000 + tid)
end

-- A snapshot of `user` in context `k` (1...#contexts), or in a random one.
function snapshot(user, k)
  local c = contexts[k or math.random(#contexts)]
  return string.format(
    '{"user":"%s","at":"%s","location":{"lat":42.02,"lon":-93.64,"speed_mps":1.0,"place":"%s"},' ..
    '"weather":{"temp_c":4.5,"cloud_pct":60,"condition":"clouds"},' ..
    '"calendar":{"events":[{"title":"x","start":"%s","end":"%s","category":"%s"}]},' ..
    '"motion":{"activity":"%s","steps_per_min":%d,"heart_rate_bpm":80},"tags":{"mood":"%s"}}',
    user, c[1], c[2], c[1], c[1], c[5], c[3], c[4], c[6])
end

-- Every request the pick scripts send, built once: each user in each context, POST to `path`.
-- Sending one of them costs wrk a table lookup instead of formatting a snapshot and a request
-- (wrk shares the machine's cores with the service it measures).
function pick_requests(path)
  local out = {}
  for i = 1, #users do
    for k = 1, #contexts do
      out[#out + 1] = wrk.format("POST", path, headers(i), snapshot(users[i], k))
    end
  end
  return out
end

function headers(i)
  return { ["Authorization"] = "Bearer " .. keys[i], ["Content-Type"] = "application/json" }
end

-- Every thread's value of its global `name` (tables are copied; a missing value is 0), for `done`.
function gather(name)
  local out = {}
  for _, t in ipairs(threads) do out[#out + 1] = t:get(name) or 0 end
  return out
end

function sum(name)
  local total = 0
  for _, v in ipairs(gather(name)) do total = total + v end
  return total
end

function max_of(name)
  local m = 0
  for _, v in ipairs(gather(name)) do m = math.max(m, v) end
  return m
end

function write_summary(file, fields)
  local f = io.open(file, "w")
  for k, v in pairs(fields) do f:write(k, "=", tostring(v), "\n") end
  f:close()
end

-- `summarise` for scripts without a `response` function (wrk then hands no response to Lua):
-- wrk's own counts, requests answered with a status of 400 or more as failed.
function summarise_counts(summary, latency, extra)
  local ok = summary.requests - summary.errors.status
  local failed = summary.errors.status
  local fields = extra or {}
  fields.ok, fields.failed = ok, failed
  summarise_fields(summary, latency, fields)
end

-- wrk's `done` for scripts with a `response` function (warm-up, feedback): the threads' count of
-- `ok_name` (successes) and `failed`; `extra` adds fields.
function summarise(ok_name, summary, latency, extra)
  local fields = extra or {}
  fields.ok, fields.failed = sum(ok_name), sum("failed")
  summarise_fields(summary, latency, fields)
end

-- The summary of every script to $SUMMARY_FILE for loadtest.sh: socket errors and latency
-- percentiles, with the fields of `extra` (the counts of answers among them).
function summarise_fields(summary, latency, extra)
  local fields = {
    errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    duration_us = summary.duration, p50_us = latency:percentile(50), p99_us = latency:percentile(99), max_us = latency.max,
    p999_us = latency:percentile(99.9),
  }
  for k, v in pairs(extra or {}) do fields[k] = v end
  write_summary(os.getenv("SUMMARY_FILE"), fields)
end
