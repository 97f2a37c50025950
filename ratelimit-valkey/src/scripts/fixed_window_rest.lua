-- The fixed window check, the rest (see fixed_window.lua): its helpers and
-- its paths.

-- Refused with `count` in the window: Retry-After is the window's end, or
-- a whole period for a cost that can never fit.
local function deny(count, old)
  local retry = to_end
  if cost > limit then
    retry = period
  end
  local remaining = limit - count
  if remaining < 0 then
    remaining = 0
  end
  return refuse(retry, remaining, to_end, old)
end

limit, period, cost = tonumber(ARGV[p]), tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
start = now - now % period
to_end = start + period - now

-- Charged to `total`: admitted while within the limit, else refused as a
-- request of cost 1 would be. `old` is what the key holds now. (Made only for a charge: a
-- function costs every call.)
local charged
if charge then
  charged = function(total, old)
    if total <= limit then
      return string.format('1 0 %d %d 0', limit - total, to_end)
    end
    local retry = to_end
    if limit < 1 then
      retry = period
    end
    return refuse(retry, 0, to_end, old)
  end
end

-- Fast path: the key counts this window (or is a penalty marker ending
-- with it). Count first and read the count before from INCRBY's result:
-- one call instead of a GET and a write. Counts are never negative, so
-- a count before of -1 is the marker; a refusal takes the cost back (a
-- charge keeps it). A probe writes nothing.
if not probe and ends_at(exp, start + period, period) and cost < EXACT / 2 then
  local r = redis.pcall('INCRBY', key, cost)
  if type(r) == 'number' then
    local count = r - cost
    if count == -1 then
      redis.call('INCRBY', key, -cost)
      return blocked()
    end
    if r < EXACT and count >= 0 then
      if charge then
        return charged(r, r)
      end
      if count + cost <= limit then
        return string.format('1 0 %d %d 0', limit - count - cost, to_end)
      end
      redis.call('INCRBY', key, -cost)
      return deny(count, count)
    end
    redis.call('INCRBY', key, -cost)
  end
end

local raw = exp and redis.call('GET', key)
if raw == MARKER then
  return blocked()
end
local count = 0
if raw and ends_at(exp, start + period, period) then
  count = tonumber(raw) or 0
end
if charge then
  -- Counts past 2^53 would not be exact; any count above the limit
  -- decides alike, so the total saturates there.
  local total = count + cost
  if total >= EXACT then
    total = math.max(count, EXACT - 1)
  end
  if total <= limit or penalty == 0 then
    set_until(string.format('%d', total), start + period, raw)
  end
  return charged(total, raw)
end
if count + cost <= limit then
  if not probe then
    set_until(string.format('%d', count + cost), start + period, raw)
  end
  return string.format('1 0 %d %d 0', limit - count - cost, to_end)
end
return deny(count, raw)
