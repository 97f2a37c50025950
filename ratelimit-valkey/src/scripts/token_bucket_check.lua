-- The token bucket check (see token_bucket.lua): the body of
-- `token_bucket`, or one check's script itself (see scripts.rs).
limit = tonumber(ARGV[p])
local capacity, need_cost = tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
local period = tonumber(ARGV[p + 3])
local unit = period
if unit < 1 then
  unit = 1
end

raw = exp and redis.call('GET', key)
if raw == MARKER then
  return blocked()
end
local spent, updated = 0, 0
if raw then
  spent = tonumber(raw) or 0
  updated = exp - ceil_div(spent, limit)
end

local elapsed = now - updated
if elapsed < 0 then
  elapsed = 0
end
-- elapsed * limit may pass 2^53, but then it is above spent (< 2^53).
local drained = elapsed * limit
local left = 0
if drained < spent then
  left = spent - drained
end
at = now
if updated > now then
  at = updated
end

if charge then
  -- The cost is added whether or not it fits; the debt saturates at 2^51
  -- units (as the core), which keeps every sum below 2^53, exact.
  local debt = left + need_cost
  if debt > MAX_CHARGED then
    debt = math.max(left, MAX_CHARGED)
  end
  local reset = ceil_div(debt, limit)
  if debt <= capacity then
    store(debt)
    return reply(1, 0, divmod(capacity - debt, unit), reset, 0)
  end
  if penalty == 0 then
    store(debt)
  end
  -- Refused as a request of cost 1 would be.
  local retry = period
  if capacity > 0 then
    retry = ceil_div(debt + unit - capacity, limit)
  end
  return refuse(retry, 0, reset, raw)
end

local need = left + need_cost
if need <= capacity then
  if not probe then
    store(need)
  end
  local remaining = divmod(capacity - need, unit)
  return reply(1, 0, remaining, ceil_div(need, limit), 0)
end
-- Refused: Retry-After is the time until the need fits, or a whole period
-- for a cost above the burst; the bucket keeps what drained.
local retry = period
if need_cost <= capacity then
  retry = ceil_div(need - capacity, limit)
end
local room = 0
if left < capacity then
  room = divmod(capacity - left, unit)
end
-- Nothing is written: what the key holds (`spent` drained since `updated`)
-- reads back as the same level at any later time as `left` stored now
-- would, under the same expiry (updated + ceil(spent / limit) = now +
-- ceil(left / limit)).
return refuse(retry, room, ceil_div(left, limit), raw)
