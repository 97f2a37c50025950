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
--
-- The leaky bucket check, part one: its common path (a count admitted
-- while its room is exact below 2^53, a penalty marker), written inline
-- (no function made). The rest of the check (leaky_bucket_rest.lua)
-- follows the shared helpers.

-- The parameters are ours, decimal integers: `+ 0` converts each once
-- (tonumber, a call, converts a string twice): the limit, one request's
-- cost (ms, frac), the tolerance (ms, frac), and one request's ticks.
local limit = argv[p] + 0
local c_ms, c_frac = argv[p + 1] + 0, argv[p + 2] + 0
local t_ms, t_frac = argv[p + 3] + 0, argv[p + 4] + 0
local period = argv[p + 5] + 0
local ticks = period
if ticks < 1 then
  ticks = 1
end

local raw = exp and redis.call('GET', key)
if raw == MARKER then
  -- Blocked by the penalty marker until it expires (status 2, see the
  -- prelude).
  local left = exp - now
  return string.format('2 %d 0 %d %d', left, left, exp)
end

-- The number the key holds (nil when absent or not a number).
local old = raw and tonumber(raw)
local tat_ms, tat_frac = 0, 0
if raw then
  tat_frac = old or 0
  tat_ms = exp
  if tat_frac > 0 then
    tat_ms = exp - 1
  end
  -- Written under another limit: carry whole ms out of frac, by
  -- divmod(tat_frac, limit) written out (see helpers.lua: `%` floors, and
  -- a quotient rounded up to the next integer leaves a negative
  -- remainder).
  local r = tat_frac % limit
  local q = (tat_frac - r) / limit
  if r < 0 then
    q, r = q - 1, r + limit
  end
  tat_ms, tat_frac = tat_ms + q, r
end

local ms, frac = tat_ms, tat_frac
if ms < now then
  ms, frac = now, 0
end
-- The level before this request, as the TAT's distance from now.
local before_ms = ms - now
local before_frac = frac
ms, frac = ms + c_ms, frac + c_frac
if frac >= limit then
  ms, frac = ms + 1, frac - limit
end
local level = ms - now

-- A count that fits: room(level, frac) (see the rest) written out while
-- its product is exact (else the rest decides; nothing is written yet),
-- then set_until(frac, ceil_ms(ms, frac), raw) (see helpers.lua) from
-- numbers.
if not (charge or probe) and (level < t_ms or (level == t_ms and frac <= t_frac)) then
  -- The tolerance less the level, in ticks, over one request's ticks.
  local d_ms, d_frac = t_ms - level, t_frac - frac
  if d_frac < 0 then
    d_ms, d_frac = d_ms - 1, d_frac + limit
  end
  local x = d_ms * limit
  if x < EXACT then
    local room = 0
    if d_ms >= 0 then
      -- q, r = divmod(x, ticks); room = q + floor((r + d_frac) / ticks).
      local r = x % ticks
      local q = (x - r) / ticks
      if r < 0 then
        q, r = q - 1, r + ticks
      end
      local y = r + d_frac
      local yr = y % ticks
      room = q + (y - yr) / ticks
      if yr < 0 then
        room = room - 1
      end
    end
    -- ceil_ms(level, frac); the key expires at ceil_ms(ms, frac).
    local reset, target = level, ms + offset
    if frac > 0 then
      reset, target = level + 1, target + 1
    end
    if not probe then
      if
        old
        and old > -EXACT
        and old < EXACT
        and (frac == old or type(redis.pcall('INCRBY', key, frac - old)) == 'number')
      then
        if pexp ~= target then
          redis.call('PEXPIREAT', key, target)
        end
      else
        if pexp ~= -2 then
          redis.call('DEL', key)
        end
        redis.call('INCRBY', key, frac)
        redis.call('PEXPIREAT', key, target)
      end
    end
    return string.format('1 0 %d %d 0', room, reset)
  end
end
