-- The leaky bucket check, the rest (see leaky_bucket.lua): its helpers,
-- made only when a check gets past the common path, and its paths.

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

if charge then
  -- The cost is added whether or not it fits; the level saturates at 2^51
  -- ticks (as the core), which keeps every sum exact.
  local cap_ms, cap_frac = divmod(2251799813685248, limit)
  if level > cap_ms or (level == cap_ms and frac > cap_frac) then
    level, frac = cap_ms, cap_frac
    if before_ms > cap_ms or (before_ms == cap_ms and before_frac > cap_frac) then
      level, frac = before_ms, before_frac
    end
    ms = now + level
  end
  local fits = level < t_ms or (level == t_ms and frac <= t_frac)
  if fits or penalty == 0 then
    set_until(string.format('%d', frac), ceil_ms(ms, frac), raw)
  end
  if fits then
    return string.format('1 0 %d %d 0', room(level, frac), ceil_ms(level, frac))
  end
  -- Refused as a request of cost 1 would be: until the level plus one
  -- request fits.
  local retry = period
  if t_ms > 0 or t_frac > 0 then
    local o_ms, o_frac = divmod(ticks, limit)
    local l_ms, l_frac = level + o_ms, frac + o_frac
    if l_frac >= limit then
      l_ms, l_frac = l_ms + 1, l_frac - limit
    end
    retry = ceil_ms(sub(l_ms, l_frac, t_ms, t_frac))
  end
  return refuse(retry, 0, ceil_ms(level, frac), raw)
end
-- An admitted count whose room the common path could not compute exactly
-- (see leaky_bucket.lua).
if level < t_ms or (level == t_ms and frac <= t_frac) then
  if probe then
    -- Admitted: the budget as the probe found it (it counts nothing).
    return string.format('1 0 %d %d 0', room(before_ms, before_frac), ceil_ms(before_ms, before_frac))
  end
  set_until(string.format('%d', frac), ceil_ms(ms, frac), raw)
  return string.format('1 0 %d %d 0', room(level, frac), ceil_ms(level, frac))
end
-- Refused: Retry-After is the time until the request fits, or a whole
-- period for a cost above the burst.
local retry = period
if c_ms < t_ms or (c_ms == t_ms and c_frac <= t_frac) then
  retry = ceil_ms(sub(level, frac, t_ms, t_frac))
end
return refuse(retry, room(before_ms, before_frac), ceil_ms(before_ms, before_frac), raw)
