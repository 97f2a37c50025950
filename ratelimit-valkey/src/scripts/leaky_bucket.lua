-- Leaky bucket, meter form (GCRA): holds up to `burst` requests, starts
-- empty, drains at `limit` per `period`. The state is the theoretical
-- arrival time (TAT) as a pair (ms, frac), frac in 1/limit ms, as the core
-- keeps it; one request is `period` ticks of 1/limit ms.
--
-- KEYS[1]   the subject's key
-- ARGV[1-3] now, expiry offset, penalty (see the prelude)
-- ARGV[4]   limit
-- ARGV[5]   cost * period / limit, whole ms
-- ARGV[6]   cost * period mod limit (frac)
-- ARGV[7]   burst * period / limit, whole ms (the tolerance)
-- ARGV[8]   burst * period mod limit (frac)
-- Reply     "status now until tat_ms tat_frac 0" (the stored TAT before
--           this request, frac normalized below limit; zeros when none)
--
-- Storage: frac as an integer; the key expires at ceil(TAT), which gives
-- tat_ms back. The caller checks that every ms value stays below 2^52.
assert(#ARGV == 8, 'leaky_bucket expects 8 arguments')
local limit = tonumber(ARGV[4])
local c_ms, c_frac = tonumber(ARGV[5]), tonumber(ARGV[6])
local t_ms, t_frac = tonumber(ARGV[7]), tonumber(ARGV[8])

local raw = exp and redis.call('GET', key)
if raw == MARKER then
  return reply(2, exp, 0, 0, 0)
end
local tat_ms, tat_frac = 0, 0
if raw then
  tat_frac = tonumber(raw) or 0
  tat_ms = exp
  if tat_frac > 0 then
    tat_ms = exp - 1
  end
  -- Written under another limit: carry whole ms out of frac.
  local q, r = divmod(tat_frac, limit)
  tat_ms, tat_frac = tat_ms + q, r
end

local ms, frac = tat_ms, tat_frac
if ms < now then
  ms, frac = now, 0
end
ms, frac = ms + c_ms, frac + c_frac
if frac >= limit then
  ms, frac = ms + 1, frac - limit
end
local level = ms - now
if level < t_ms or (level == t_ms and frac <= t_frac) then
  local at = ms
  if frac > 0 then
    at = ms + 1
  end
  set_until(int(frac), at, raw)
  return reply(1, 0, tat_ms, tat_frac, 0)
end
return refuse(tat_ms, tat_frac, 0, raw)
