-- The token bucket check (see token_bucket.lua): the body of
-- `token_bucket`, or one check's script itself (see scripts.rs).
-- The parameters are ours, decimal integers: `+ 0` converts each once
-- (tonumber, a call, converts a string twice), and a malformed one stops
-- the check with an error as an arithmetic on nil would.
local argv = ARGV
limit = argv[p] + 0
local capacity, need_cost, period = argv[p + 1] + 0, argv[p + 2] + 0, argv[p + 3] + 0
local unit = period
if unit < 1 then
  unit = 1
end

-- A count that fits whatever a live key holds (see token_bucket.lua) reads
-- it with GETEX, moving its expiry to where the count most likely puts it:
-- the write is then one INCRBY. (A penalty marker gets its expiry back.)
local raw
if exp and not (probe or charge) and (exp - now) * limit + need_cost <= capacity then
  local before = pexp
  local ms = need_cost / limit + 0.5
  pexp = exp + ms - ms % 1 + offset
  raw = redis.call('GETEX', key, 'PXAT', pexp)
  if raw == MARKER then
    redis.call('PEXPIREAT', key, before)
    return blocked()
  end
else
  raw = exp and redis.call('GET', key)
  if raw == MARKER then
    return blocked()
  end
end
old = raw and tonumber(raw)
local spent, updated = 0, 0
if raw then
  spent = old or 0
  -- exp - ceil(spent / limit), written out (see ceil_div below).
  local r = spent % limit
  updated = exp - (spent - r) / limit
  if r > 0 then
    updated = updated - 1
  end
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

local need = left + need_cost
if need <= capacity and not charge then
  -- reset = ceil(need / limit), written out (see ceil_div below).
  local r = need % limit
  local reset = (need - r) / limit
  if r > 0 then
    reset = reset + 1
  end
  if not probe then
    put(need, at + reset)
  end
  -- floor((capacity - need) / unit), exactly (as divmod).
  local room = capacity - need
  r = room % unit
  room = (room - r) / unit
  if r < 0 then
    room = room - 1
  end
  return string.format('1 0 %d %d 0', room, reset)
end

-- ceil(x / d) for integers 0 <= x < 2^53, d >= 1, exactly (as divmod:
-- x % d is the remainder, or that less d when x / d rounds up to the next
-- integer, and then (x - r) / d is the ceiling already). Made here, past
-- the admitted count's return: a function costs every call that makes it.
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
      put(debt, at + reset)
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
