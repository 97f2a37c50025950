-- The sliding window check, the rest (see sliding_window.lua): its
-- helpers, made only when a check gets past the common path, and the
-- other paths.

-- ceil(prev * (period - elapsed) / period) + cur, exactly: prev * r may pass
-- 2^53, so split prev by the period (r < period and period^2 < 2^53).
local function estimate(cur, prev, start)
  local r = period - (now - start)
  local pq, pr = divmod(prev, period)
  local wq, wr = divmod(pr * r, period)
  local weighted = pq * r + wq
  if wr > 0 then
    weighted = weighted + 1
  end
  return cur + weighted
end

-- The time into a window from which ceil(w * (period - e) / period) <= k,
-- that is e >= period - floor(k * period / w); 0 when always.
local function first_fit(k, w)
  if w == 0 or k >= w then
    return 0
  end
  return period - muldiv(k, period, w)
end

-- Time until every counted request has aged out of the estimate.
local function reset_ms(cur, prev)
  if cur > 0 then
    return to_end + period
  elseif prev > 0 then
    return to_end
  end
  return 0
end

-- Admitted: `cur` includes the cost.
local function admit(est, cur, prev)
  return string.format('1 0 %d %d 0', limit - est - cost, reset_ms(cur, prev))
end

-- Refused. Retry-After is the earliest admission if nothing else happens:
-- in this window once enough of the previous one has aged out, or in the
-- next one, where this window's count becomes the previous one.
-- `c` is the cost the retry is for: this request's, or 1 after a charge.
local function deny(est, cur, prev, old, c)
  local retry
  if c > limit then
    retry = period
  elseif cur + c <= limit then
    retry = first_fit(limit - c - cur, prev) - elapsed
    if retry < 1 then
      retry = 1
    end
  else
    retry = to_end + first_fit(limit - c, cur)
  end
  local remaining = limit - est
  if remaining < 0 then
    remaining = 0
  end
  return refuse(retry, remaining, reset_ms(cur, prev), old)
end

-- Charged: `cur` includes the cost. Admitted while the estimate is within
-- the limit, else refused as a request of cost 1 would be. `old` is what
-- the key holds now.
local function charged(cur, prev, old)
  local est = estimate(cur, prev, start)
  if est <= limit then
    return string.format('1 0 %d %d 0', limit - est, reset_ms(cur, prev))
  end
  return deny(est, cur, prev, old, 1)
end

-- What the fast path counted and did not decide: a charge (its increment
-- kept), a refused count (taken back).
if cur then
  if charge then
    return charged(cur + cost, prev, old + inc)
  end
  return deny(est, cur, prev, old, cost)
end

-- The key as GET read it (see sliding_window.lua).
local ws
cur, prev, ws = 0, 0, 0
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
    local packed
    if total > 0 then
      packed = string.format('%d%010d', total, prev)
    else
      packed = string.format('%d', prev)
    end
    set_until(packed, start + 2 * period, raw)
  end
  return charged(total, prev, raw)
end
est = estimate(cur, prev, start)
if est + cost <= limit then
  if probe then
    -- Admitted: the budget as the probe found it (it counts nothing).
    return string.format('1 0 %d %d 0', limit - est, reset_ms(cur, prev))
  end
  cur = cur + cost
  local packed
  if cur == 0 then
    packed = string.format('%d', prev)
  else
    packed = string.format('%d%010d', cur, prev)
  end
  set_until(packed, start + 2 * period, raw)
  return admit(est, cur, prev)
end
return deny(est, cur, prev, raw, cost)
