-- The sliding window check (see sliding_window.lua): the body of
-- `sliding_window`, or one check's script itself (see scripts.rs).
-- The parameters are ours, decimal integers: `+ 0` converts each once (as
-- the token bucket's check).
local argv = ARGV
limit, period, cost = argv[p] + 0, argv[p + 1] + 0, argv[p + 2] + 0
start = now - now % period
elapsed = now - start
to_end = period - elapsed

-- Charged: `cur` includes the cost. Admitted while the estimate is within
-- the limit, else refused as a request of cost 1 would be. `old` is what
-- the key holds now. (Made only for a charge: a
-- function costs every call.)
local charged
if charge then
  charged = function(cur, prev, old)
    local est = estimate(cur, prev, start)
    if est <= limit then
      return reply(1, 0, limit - est, reset_ms(cur, prev), 0)
    end
    return deny(est, cur, prev, old, 1)
  end
end

-- Fast path: the key holds this window (or is a penalty marker ending with
-- it). Add the cost to `current` first and read the state before from
-- INCRBY's result: one call instead of a GET and a write. The packed value
-- is exact below 2^53 (current below about 900,000); above, or on a value
-- that is not a number, the increment is taken back and the GET path
-- below decides. A value of -1 before is the marker; a refusal takes the
-- increment back (a charge keeps it). A probe writes nothing.
-- (A number below 2^53 goes to Valkey as its exact integer digits.)
local inc = cost * SHIFT
if not probe and ends_at(exp, start + 2 * period, period) and inc < EXACT then
  local r = redis.pcall('INCRBY', key, inc)
  if type(r) == 'number' then
    local old = r - inc
    if old == -1 then
      redis.call('INCRBY', key, -inc)
      return blocked()
    end
    if r < EXACT and old >= 0 then
      local cur, prev = divmod(old, SHIFT)
      if charge then
        return charged(cur + cost, prev, r)
      end
      local est = estimate(cur, prev, start)
      if est + cost <= limit then
        return admit(est, cur + cost, prev)
      end
      redis.call('INCRBY', key, -inc)
      return deny(est, cur, prev, old, cost)
    end
    redis.call('INCRBY', key, -inc)
  end
end

local raw = exp and redis.call('GET', key)
if raw == MARKER then
  return blocked()
end
local ws, cur, prev = 0, 0, 0
if raw then
  -- The window the key counts, its end read with the slack of `ends_at`.
  if ends_at(exp, start + 2 * period, period) then
    ws = start
  elseif ends_at(exp, start + period, period) then
    ws = start - period
  else
    ws = exp - 2 * period
  end
  local n = #raw
  if n <= 10 then
    prev = tonumber(raw) or 0
  else
    cur = tonumber(string.sub(raw, 1, n - 10)) or 0
    prev = tonumber(string.sub(raw, n - 9)) or 0
  end
end
if ws ~= start then
  if ws + period == start then
    prev = cur
  else
    prev = 0
  end
  cur = 0
end
if charge then
  -- The most a charge leaves in `current` (as the core): below 2^31, so
  -- that `first_fit` divides exactly, and 10 digits as `previous`.
  local total = cur + cost
  if total > 2147483647 then
    total = math.max(cur, 2147483647)
  end
  if penalty == 0 or estimate(total, prev, start) <= limit then
    local packed = int(prev)
    if total > 0 then
      packed = int(total) .. string.format('%010d', prev)
    end
    set_until(packed, start + 2 * period, raw)
  end
  return charged(total, prev, raw)
end
local est = estimate(cur, prev, start)
if est + cost <= limit then
  cur = cur + cost
  if not probe then
    local packed
    if cur == 0 then
      packed = int(prev)
    else
      packed = int(cur) .. string.format('%010d', prev)
    end
    set_until(packed, start + 2 * period, raw)
  end
  return admit(est, cur, prev)
end
return deny(est, cur, prev, raw, cost)
