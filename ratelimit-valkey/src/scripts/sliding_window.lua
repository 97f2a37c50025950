-- Sliding window: the current window's count plus the previous window's
-- count weighted by the share of it still inside the last period, rounded up.
--
-- ARGV[p]     limit
-- ARGV[p + 1] period in ms
-- (The cost of this request is in the head, see begin.lua.)
-- Reply       the decision (see the prelude)
--
-- Storage: current and previous packed in one decimal integer,
-- current * 10^10 + previous (both below 2^31: a limit below 2^31, a
-- charge saturating at 2^31 - 1); the key expires two
-- periods after the current window's start, which gives that start back.
--
-- The sliding window check, part one: its common path, an admitted count
-- of a live key, written inline (no function made). The rest of the check
-- (sliding_window_rest.lua) follows the shared helpers.
local SHIFT = 10000000000

-- The parameters are ours, decimal integers: `+ 0` converts each once
-- (tonumber, a call, converts a string twice).
local limit, period = argv[p] + 0, argv[p + 1] + 0
local start = now - now % period
local elapsed = now - start
local to_end = period - elapsed

-- Fast path: the key holds this window (or is a penalty marker ending with
-- it). Add the cost to `current` first and read the state before from
-- INCRBY's result: one call instead of a GET and a write. The packed value
-- is exact below 2^53 (current below about 900,000); above, or on a value
-- that is not a number, the increment is taken back and the GET path
-- (in the rest) decides. A value of -1 before is the marker; a refusal
-- takes the increment back (a charge keeps it). A probe writes nothing.
-- (A number below 2^53 goes to Valkey as its exact integer digits.)
--
-- What the fast path leaves to the rest when it counted and did not
-- decide (a charge, a refused count): `old`, the value before its INCRBY,
-- `cur` and `prev` (and `est`, the estimate before the cost, for a count).
local old, cur, prev, est
local inc = cost * SHIFT
-- `ends_at(exp, start + 2 * period, period)` (see helpers.lua), inline.
local slack = period - 1
slack = (slack - slack % 4) / 4
if slack > 1000 then
  slack = 1000
end
local ends = start + 2 * period
if not probe and exp and exp >= ends - slack and exp <= ends + slack and inc < EXACT then
  local r = redis.pcall('INCRBY', key, inc)
  if type(r) == 'number' then
    old = r - inc
    if r < EXACT and old >= 0 then
      -- The divisions are `divmod`'s (see helpers.lua), inline: `%` floors,
      -- and a quotient rounded up to the next integer leaves a negative
      -- remainder. cur, prev = divmod(old, SHIFT):
      prev = old % SHIFT
      cur = (old - prev) / SHIFT
      if prev < 0 then
        cur, prev = cur - 1, prev + SHIFT
      end
      if not charge then
        -- est = estimate(cur, prev) (see the rest), here where
        -- period - (now - start) is to_end:
        est = cur
        if prev > 0 then
          local pr = prev % period
          local pq = (prev - pr) / period
          if pr < 0 then
            pq, pr = pq - 1, pr + period
          end
          local w = pr * to_end
          local wr = w % period
          local wq = (w - wr) / period
          if wr < 0 then
            wq, wr = wq - 1, wr + period
          end
          est = est + pq * to_end + wq
          if wr > 0 then
            est = est + 1
          end
        end
        if est + cost <= limit then
          -- Admitted; reset_ms(cur + cost, prev) (see the rest).
          local reset = 0
          if cur + cost > 0 then
            reset = to_end + period
          elseif prev > 0 then
            reset = to_end
          end
          return string.format('1 0 %d %d 0', limit - est - cost, reset)
        end
        redis.call('INCRBY', key, -inc)
        if penalty == 0 then
          -- Refused without a penalty: deny(est, cur, prev, old, cost) (see
          -- the rest), inline. Retry-After is `retry` + first_fit(k, w): a
          -- whole period for a cost above the limit, else in this window
          -- (at least 1 ms) or the next.
          local retry, k, w = period, 0, 0
          if cost > limit then
            retry = period
          elseif cur + cost <= limit then
            retry, k, w = -elapsed, limit - cost - cur, prev
          else
            retry, k, w = to_end, limit - cost, cur
          end
          -- first_fit(k, w): period - floor(k * period / w), written out
          -- (as divmod) while the product is exact; past 2^53 (muldiv's
          -- limbs) the rest decides.
          local x = 0
          if w > 0 and k < w then
            x = k * period
            local r = x % w
            retry = retry + period - (x - r) / w
            if r < 0 then
              retry = retry + 1
            end
          end
          if x < EXACT then
            if retry < 1 then
              retry = 1
            end
            local remaining = limit - est
            if remaining < 0 then
              remaining = 0
            end
            -- reset_ms(cur, prev) (see the rest).
            local reset = 0
            if cur > 0 then
              reset = to_end + period
            elseif prev > 0 then
              reset = to_end
            end
            return string.format('0 %d %d %d 0', retry, remaining, reset)
          end
        end
      end
    else
      redis.call('INCRBY', key, -inc)
      if old == -1 then
        -- Blocked by the penalty marker until it expires (status 2, see the
        -- prelude).
        local left = exp - now
        return string.format('2 %d 0 %d %d', left, left, exp)
      end
    end
  end
end

-- Not counted by the fast path: read the key (the rest decides), a
-- penalty marker here.
local raw
if not cur then
  raw = exp and redis.call('GET', key)
  if raw == MARKER then
    -- Blocked by the penalty marker until it expires (status 2, see the
    -- prelude).
    local left = exp - now
    return string.format('2 %d 0 %d %d', left, left, exp)
  end
end
