-- The fixed window check, the rest (see fixed_window.lua): its helpers,
-- made only when a check gets past the common path, and its paths.

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

-- Charged to `total`: admitted while within the limit, else refused as a
-- request of cost 1 would be. `old` is what the key holds now.
local function charged(total, old)
  if total <= limit then
    return string.format('1 0 %d %d 0', limit - total, to_end)
  end
  local retry = to_end
  if limit < 1 then
    retry = period
  end
  return refuse(retry, 0, to_end, old)
end

-- What the fast path counted and did not decide: a charge (its cost kept),
-- a count refused with a penalty (taken back).
if count then
  if charge then
    return charged(count + cost, count + cost)
  end
  return deny(count, count)
end

-- The key as GET read it (see fixed_window.lua).
count = 0
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
  if probe then
    -- Admitted: the budget as the probe found it (it counts nothing).
    return string.format('1 0 %d %d 0', limit - count, to_end)
  end
  set_until(string.format('%d', count + cost), start + period, raw)
  return string.format('1 0 %d %d 0', limit - count - cost, to_end)
end
return deny(count, raw)
