-- Token bucket: up to `burst` tokens, starts full, refills at `limit` per
-- `period`; a request takes `cost` tokens. Tokens are counted in units of
-- 1/period of a token, as the core does, so no fraction is rounded. The
-- leaky bucket runs this check too (as the core: its level is the tokens
-- spent; its head's digit is 4).
--
-- ARGV[p]     limit (refill units per ms), as 10 digits, zeros in front
-- ARGV[p + 1] capacity: burst * period
-- ARGV[p + 2] period in ms (Retry-After of a cost above the burst)
-- (The cost of this request is in the head, see begin.lua: its need is
-- cost * max(period, 1) units, a charge's at most 2^51.)
-- Reply       the decision (see the prelude)
--
-- Storage: the units spent and the limit they were written under, as one
-- negative integer, -(spent * 10^10 + limit) (a limit is at most 10^9),
-- written from decimal strings so that no Lua number passes 2^53; the key
-- expires when the bucket is full again at that limit, updated_ms +
-- ceil(spent / limit), which gives updated_ms back whatever the limit is
-- now: a publish that changes the rate keeps the tokens, refilled at the
-- new rate from the last update on. A full bucket is no key. A
-- non-negative integer is the former storage, the units spent alone,
-- read under the current limit. The caller checks that capacity + need
-- < 2^53 (for a charge: capacity + period < 2^52), so a count's need is
-- exact.
--
-- So a live key (expiring at `exp`, after `now`) written under the
-- current limit holds at most (exp - now) * limit units now: exactly that
-- less the rounding, ceil(spent / limit) * limit - spent, when it was
-- written at or before `now`, and its `spent` otherwise, which is less.
-- After a count that fits, the key expires at exp + floor(need / limit)
-- or one ms later (again by the rounding), whichever was the write's
-- time. (Written under another limit, it may hold more: the expiry read
-- with GETEX on that guess is put back when the count is refused.)
local MAX_CHARGED = 2251799813685248
-- The storage's limit part: 10 decimal digits.
local TEN_DIGITS = 10000000000

-- The token bucket check, part one: its common path, a count of a live
-- key, written inline (no function made). The rest of the check
-- (token_bucket_rest.lua) follows the shared helpers.

-- The parameters are ours, decimal integers: `+ 0` converts each once
-- (tonumber, a call, converts a string twice), and a malformed one stops
-- the check with an error as an arithmetic on nil would.
local limit_digits = argv[p]
local limit = limit_digits + 0
local capacity, period = argv[p + 1] + 0, argv[p + 2] + 0
local unit = period
if unit < 1 then
  unit = 1
end
-- A charge's need saturates (as the core); a product past 2^53 rounds to
-- a number past 2^51 all the same.
local need_cost = cost * unit
if charge and need_cost > MAX_CHARGED then
  need_cost = MAX_CHARGED
end

-- A count that fits whatever a live key holds (see the header) reads
-- it with GETEX, moving its expiry to where the count most likely puts it:
-- the write is then one INCRBY. (A penalty marker gets its expiry back.)
local raw, moved
if exp and not (probe or charge) and (exp - now) * limit + need_cost <= capacity then
  local before = pexp
  moved = before
  local ms = need_cost / limit + 0.5
  pexp = exp + ms - ms % 1 + offset
  raw = redis.call('GETEX', key, 'PXAT', pexp)
  if raw == MARKER then
    redis.call('PEXPIREAT', key, before)
  end
else
  raw = exp and redis.call('GET', key)
end
if raw == MARKER then
  -- Blocked by the penalty marker until it expires (status 2, see the
  -- prelude).
  local left = exp - now
  return string.format('2 %d 0 %d %d', left, left, exp)
end
-- What the key holds: the units spent and the limit they were written
-- under (`wrote`); `same` when that is the current limit (the write is
-- then an INCRBY by the difference). Anything else (not a number, a
-- malformed value) reads as a full bucket.
local spent, updated, same = 0, 0, false
if raw then
  local wrote = limit
  local n = #raw
  if n > 11 then
    -- -(spent * 10^10 + limit): the spent part read with its sign, the
    -- limit part compared with the limit's digits as sent (`limit_digits`)
    -- and read only when it differs.
    spent = tonumber(string.sub(raw, 1, n - 10))
    local digits = string.sub(raw, n - 9)
    if digits == limit_digits then
      same = true
    else
      wrote = tonumber(digits)
      same = wrote == limit
    end
    if spent and spent < 0 and wrote and wrote >= 1 then
      spent = -spent
    elseif spent and spent > 0 then
      -- The former storage, the units spent alone (no sign), read under
      -- the current limit and written afresh.
      spent, wrote, same = tonumber(raw), limit, false
    else
      spent = nil
    end
  else
    -- The former storage, short.
    spent = tonumber(raw)
  end
  if spent and spent >= 0 then
    -- exp - ceil(spent / wrote), written out (as ceil_div, in the rest).
    local r = spent % wrote
    updated = exp - (spent - r) / wrote
    if r > 0 then
      updated = updated - 1
    end
  else
    -- Other content: a full bucket (as no key), written afresh.
    spent, same = 0, false
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
-- When the bucket was last drained.
local at = now
if updated > now then
  at = updated
end

local need = left + need_cost
if need <= capacity and probe then
  -- Admitted: the budget as the probe found it (it counts nothing), as a
  -- count of cost 0 answers: the need is what is spent.
  need = left
end
if need <= capacity and not charge then
  -- reset = ceil(need / limit), written out (as ceil_div, in the rest).
  local r = need % limit
  local reset = (need - r) / limit
  if r > 0 then
    reset = reset + 1
  end
  if not probe then
    -- set_until(value, at + reset, raw) (see helpers.lua), inline: an
    -- INCRBY by the difference of the spent parts (their limit the same)
    -- as a decimal string, exact at any size; else the key made afresh.
    -- Nothing spent is no key (never -limit, which could be the marker).
    local target = at + reset + offset
    -- The difference times 10^10, a number when exact (sent as its
    -- digits), else its decimal string.
    local by = (spent - need) * TEN_DIGITS
    if by <= -EXACT or by >= EXACT then
      by = string.format('%d0000000000', spent - need)
    end
    if
      same
      and need > 0
      and (need == spent or type(redis.pcall('INCRBY', key, by)) == 'number')
    then
      if pexp ~= target then
        redis.call('PEXPIREAT', key, target)
      end
    elseif need > 0 then
      -- No key: made with INCRBY (an integer inside the key object) when
      -- the value fits 64 bits. A key of other content: one SET over it
      -- (a string, made an integer by the next INCRBY); never DEL then
      -- write, which a slot being migrated refuses (the key is no longer
      -- local).
      local value = -need * TEN_DIGITS - limit
      if value <= -EXACT then
        value = string.format('-%d%010d', need, limit)
      end
      if pexp == -2 and type(redis.pcall('INCRBY', key, value)) == 'number' then
        redis.call('PEXPIREAT', key, target)
      else
        redis.call('SET', key, value, 'PXAT', target)
      end
    elseif pexp ~= -2 then
      redis.call('DEL', key)
    end
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


-- A count refused: Retry-After is the time until the need fits, or a whole
-- period for a cost above the burst; the bucket keeps what drained.
-- Without a penalty, replied here (refuse(), see helpers.lua, inline); a
-- penalty is started by the rest.
local retry, room, reset = period, 0, 0
if moved then
  -- The GETEX guess was for a count that fits: put the expiry back.
  redis.call('PEXPIREAT', key, moved)
  pexp = moved
end
if not charge then
  -- retry = ceil((need - capacity) / limit), written out (as ceil_div).
  if need_cost <= capacity then
    local r = (need - capacity) % limit
    retry = (need - capacity - r) / limit
    if r > 0 then
      retry = retry + 1
    end
  end
  -- room = floor((capacity - left) / unit), written out (as divmod).
  if left < capacity then
    local r = (capacity - left) % unit
    room = (capacity - left - r) / unit
    if r < 0 then
      room = room - 1
    end
  end
  -- reset = ceil(left / limit), written out (as ceil_div). Nothing is
  -- written: what the key holds (`spent` drained since `updated`) reads
  -- back as the same level at any later time as `left` stored now would,
  -- under the same expiry (updated + ceil(spent / limit) = now +
  -- ceil(left / limit)).
  local r = left % limit
  reset = (left - r) / limit
  if r > 0 then
    reset = reset + 1
  end
  if penalty == 0 then
    if raw and not same and not probe then
      -- Written under another limit (a publish changed it), or in the
      -- former storage: the same spent and last update under the current
      -- limit, the key expiring when the bucket is full at the rate now
      -- (as the core moves its state's end).
      local r = spent % limit
      local e = updated + (spent - r) / limit
      if r > 0 then
        e = e + 1
      end
      if spent > 0 and e > now then
        redis.call('SET', key, string.format('-%d%010d', spent, limit), 'PXAT', e + offset)
      else
        redis.call('DEL', key)
      end
    end
    return string.format('0 %d %d %d 0', retry, room, reset)
  end
end
