-- Sliding window: the current window's count plus the previous window's
-- count weighted by the share of it still inside the last period, rounded up.
--
-- ARGV[p]     limit
-- ARGV[p + 1] period in ms
-- ARGV[p + 2] cost of this request
-- Reply       the decision (see the prelude)
--
-- Storage: current and previous packed in one decimal integer,
-- current * 10^10 + previous (both below 2^31: a limit below 2^31, a
-- charge saturating at 2^31 - 1); the key expires two
-- periods after the current window's start, which gives that start back.
local SHIFT = 10000000000

-- This check's numbers (set by the algorithm, read by the helpers).
local limit, period, cost, start, elapsed, to_end

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
