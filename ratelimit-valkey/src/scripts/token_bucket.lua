-- Token bucket: up to `burst` tokens, starts full, refills at `limit` per
-- `period` up to `burst`; a request takes `cost` tokens. Tokens are
-- counted in units of 1/period of a token, as the core does, so no
-- fraction is rounded. What the bucket lacks (the capacity less its
-- tokens, none when they pass it) drains as the leaky bucket's level
-- does: the arithmetic below is leaky_bucket.lua's, on that.
--
-- ARGV[p]     limit (refill units per ms)
-- ARGV[p + 1] capacity: burst * period
-- ARGV[p + 2] period in ms (Retry-After of a cost above the burst)
-- (The cost of this request is in the head, see begin.lua: its need is
-- cost * max(period, 1) units, a charge's at most 2^51.)
-- Reply       the decision (see the prelude)
--
-- Storage: the tokens and the time from their count to the key's expiry
-- (`span`), as one negative integer whose decimal digits are, from the
-- last: the span's width less 7 (1 to 9), the sign of the tokens (0, or 1
-- below zero: a debt), the span on that width (8 digits up to 27 hours),
-- then the tokens' magnitude, -(tokens * 10^(w + 2) + span * 100 + sign *
-- 10 + w - 7): each part keeps its place whatever the others hold, so two
-- values of one width and sign differ by an INCRBY of the parts'
-- differences. Written from decimal strings, so that no Lua number passes
-- 2^53. The key expires when the bucket is full again at the quota of
-- that count, which gives the count's time back (the expiry less the
-- span) whatever the quota is now: a publish that changes the limit
-- keeps the tokens, refilled at the new rate from their count on, one
-- that lowers the burst caps them at it, one that raises it keeps them. A
-- full bucket is no key. A non-negative integer is the former storage,
-- the units spent, read under the current quota. The caller checks that
-- capacity + need < 2^53 (for a charge: capacity + period < 2^52), so a
-- count's need is exact.
--
-- So a live key (expiring at `exp`, after `now`) written under the
-- current quota lacks at most (exp - now) * limit units now: exactly that
-- less the rounding when it was written at or before `now`. After a
-- count that fits, the key expires at exp + floor(need / limit) or one ms
-- later (again by the rounding), whichever was the write's time. (Written
-- under another quota, it may lack more: the expiry read with GETEX on
-- that guess is put back when the count is refused.)
local MAX_CHARGED = 2251799813685248

-- The token bucket check, part one: its common path, a count of a live
-- key, written inline (no function made). The rest of the check
-- (token_bucket_rest.lua) follows the shared helpers.

-- The parameters are ours, decimal integers: `+ 0` converts each once
-- (tonumber, a call, converts a string twice), and a malformed one stops
-- the check with an error as an arithmetic on nil would.
local limit = argv[p] + 0
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
-- What the key holds: the tokens (`tokens`) counted at `updated`, and
-- what the bucket then lacked under the current quota (`spent`); `short`
-- when the value has an 8-digit span and no debt (a count's write is then
-- an INCRBY by the difference). Anything else (not a number, a malformed
-- value) reads as a full bucket.
local spent, updated, short, tokens, span = 0, 0, false, 0, 0
if raw then
  local n = #raw
  if string.byte(raw) == 45 then
    -- '-', the tokens' magnitude (none when 0), the span, the sign, the
    -- span's width less 7.
    local w = (string.byte(raw, n) or 0) - 41
    local last = n - 2 - w
    local t = 0
    if last >= 2 then
      t = tonumber(string.sub(raw, 2, last))
    else
      last = 1
    end
    span = w >= 8 and w <= 16 and n >= 4 and t and tonumber(string.sub(raw, last + 1, n - 2))
    if span then
      tokens = t
      if string.byte(raw, n - 1) == 49 then
        tokens = -t
      end
      short = w == 8 and tokens >= 0
      updated = exp - span
      if tokens < capacity then
        spent = capacity - tokens
      end
    else
      updated, tokens, span = exp, capacity, 0
    end
  else
    spent = tonumber(raw) or 0
    tokens = capacity - spent
    -- exp - ceil(spent / limit), written out (as ceil_div, in the rest).
    local r = spent % limit
    updated = exp - (spent - r) / limit
    if r > 0 then
      updated = updated - 1
    end
    span = exp - updated
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
    -- INCRBY by the difference of two short values (tokens and span, each
    -- part's difference, borrowing so that both have one sign) as a
    -- decimal string, exact at any size; else the key made afresh.
    -- Nothing lacking (a full bucket) is no key.
    local target = at + reset + offset
    local a, b = tokens - (capacity - need), span - reset
    if a > 0 and b < 0 then
      a, b = a - 1, b + 100000000
    elseif a < 0 and b > 0 then
      a, b = a + 1, b - 100000000
    end
    if
      short
      and need > 0
      and reset < 100000000
      and (
        (a == 0 and b == 0)
        or type(redis.pcall('INCRBY', key, a == 0 and string.format('%d00', b) or string.format('%d%08d00', a, math.abs(b)))) == 'number'
      )
    then
      if pexp ~= target then
        redis.call('PEXPIREAT', key, target)
      end
    else
      if pexp ~= -2 then
        redis.call('DEL', key)
      end
      if need > 0 then
        -- The tokens, never below zero here; the span at least 1 ms.
        local w = 8
        if reset >= 100000000 then
          w = #string.format('%d', reset)
        end
        local value = string.format('-%d0%d', reset, w - 7)
        if need < capacity then
          value = string.format('-%d%0' .. w .. 'd0%d', capacity - need, reset, w - 7)
        end
        if type(redis.pcall('INCRBY', key, value)) == 'number' then
          redis.call('PEXPIREAT', key, target)
        else
          -- Past a 64-bit integer: kept as a string.
          redis.call('SET', key, value, 'PXAT', target)
        end
      end
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
    if raw and not probe then
      -- The key's end under the current quota: the count's time plus what
      -- the bucket lacks at the current rate (as the core moves its
      -- state's end). Rewritten with the same tokens when it moved (a
      -- publish changed the limit or the burst), or deleted when past.
      local r = spent % limit
      local e = updated + (spent - r) / limit
      if r > 0 then
        e = e + 1
      end
      if e ~= exp then
        redis.call('DEL', key)
        if spent > 0 and e > now then
          -- The same tokens, the new span (see the header).
          local g, t, w, sp = 0, tokens, 8, e - updated
          if t < 0 then
            g, t = 1, -t
          end
          if sp >= 100000000 then
            w = #string.format('%d', sp)
          end
          local value = string.format('-%d%d%d', sp, g, w - 7)
          if t > 0 then
            value = string.format('-%d%0' .. w .. 'd%d%d', t, sp, g, w - 7)
          end
          if type(redis.pcall('INCRBY', key, value)) == 'number' then
            redis.call('PEXPIREAT', key, e + offset)
          else
            redis.call('SET', key, value, 'PXAT', e + offset)
          end
        end
      end
    end
    return string.format('0 %d %d %d 0', retry, room, reset)
  end
end
