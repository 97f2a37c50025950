-- The token bucket check, the rest (see token_bucket.lua): its helpers,
-- made only when a check gets past the common path, and the other paths.

-- ceil(x / d) for integers 0 <= x < 2^53, d >= 1, exactly (as divmod:
-- x % d is the remainder, or that less d when x / d rounds up to the next
-- integer, and then (x - r) / d is the ceiling already).
local function ceil_div(x, d)
  local r = x % d
  local q = (x - r) / d
  if r > 0 then
    q = q + 1
  end
  return q
end

if charge then
  -- The cost is added whether or not it fits; the debt saturates at 2^51
  -- units (as the core), which keeps every sum below 2^53, exact.
  local debt = left + need_cost
  if debt > MAX_CHARGED then
    debt = math.max(left, MAX_CHARGED)
  end
  local reset = ceil_div(debt, limit)
  if debt <= capacity or penalty == 0 then
    if debt > 0 then
      set_until(string.format('-%d%010d', debt, limit), at + reset, raw)
    elseif pexp ~= -2 then
      redis.call('DEL', key)
    end
  end
  if debt <= capacity then
    return string.format('1 0 %d %d 0', divmod(capacity - debt, unit), reset)
  end
  -- Refused as a request of cost 1 would be.
  local retry = period
  if capacity > 0 then
    retry = ceil_div(debt + unit - capacity, limit)
  end
  return refuse(retry, 0, reset, raw)
end

-- A count refused with a penalty (see token_bucket.lua): start it.
return refuse(retry, room, reset, raw)
