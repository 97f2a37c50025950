-- Leaky bucket, meter form (GCRA): holds up to `burst` requests, starts
-- empty, drains at `limit` per `period`. The state is the theoretical
-- arrival time (TAT) as a pair (ms, frac), frac in 1/limit ms, as the core
-- keeps it; one request is `period` ticks of 1/limit ms.
--
-- ARGV[p]     limit
-- ARGV[p + 1] cost * period / limit, whole ms (a charge's cost * period at
--             most 2^51)
-- ARGV[p + 2] cost * period mod limit (frac)
-- ARGV[p + 3] burst * period / limit, whole ms (the tolerance)
-- ARGV[p + 4] burst * period mod limit (frac)
-- ARGV[p + 5] period in ms (one request is max(period, 1) ticks)
-- Reply       the decision (see the prelude)
--
-- Storage: frac as an integer; the key expires at ceil(TAT), which gives
-- tat_ms back. The caller checks that every ms value stays below 2^52.

-- This check's numbers (set by the algorithm, read by the helpers): the
-- limit, one request's ticks and the tolerance (ms, frac).
local limit, ticks, t_ms, t_frac

-- (a_ms, a_frac) - (b_ms, b_frac), frac kept in [0, limit).
local function sub(a_ms, a_frac, b_ms, b_frac)
  local ms, frac = a_ms - b_ms, a_frac - b_frac
  if frac < 0 then
    ms, frac = ms - 1, frac + limit
  end
  return ms, frac
end

-- ceil of a level (ms, frac) in whole ms.
local function ceil_ms(ms, frac)
  if frac > 0 then
    return ms + 1
  end
  return ms
end

-- How many requests still fit above a level (ms, frac): the tolerance
-- minus the level, in ticks, floor-divided by one request's ticks.
local function room(ms, frac)
  local d_ms, d_frac = sub(t_ms, t_frac, ms, frac)
  if d_ms < 0 then
    return 0
  end
  local q, r = muldiv(d_ms, limit, ticks)
  return q + divmod(r + d_frac, ticks)
end

