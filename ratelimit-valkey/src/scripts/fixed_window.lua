-- Fixed window: counts requests per calendar window of `period`.
--
-- ARGV[p]     limit
-- ARGV[p + 1] period in ms
-- (The cost of this request is in the head, see begin.lua.)
-- Reply       the decision (see the prelude)
--
-- Storage: the count as an integer (stored in the key object itself); the
-- key expires at the window's end, which also says which window it counts
-- (give or take the drift of a key moved between nodes, see `ends_at`).
--
-- The fixed window check, part one: its common path (a count of a live
-- key, admitted or refused without a penalty), written inline (no function
-- made). The rest of the check (fixed_window_rest.lua) follows the shared
-- helpers.

-- The parameters are ours, decimal integers: `+ 0` converts each once
-- (tonumber, a call, converts a string twice).
local limit, period = argv[p] + 0, argv[p + 1] + 0
local start = now - now % period
local to_end = start + period - now

-- Fast path: the key counts this window (or is a penalty marker ending
-- with it). Count first and read the count before from INCRBY's result:
-- one call instead of a GET and a write. Counts are never negative, so
-- a count before of -1 is the marker; a refusal takes the cost back (a
-- charge keeps it). A probe writes nothing.
--
-- What the fast path leaves to the rest when it counted and did not
-- decide (a charge, a count refused with a penalty): `count`, the count
-- before its INCRBY (the cost kept for a charge, taken back otherwise).
local count
-- `ends_at(exp, start + period, period)` (see helpers.lua), inline.
local slack = period - 1
slack = (slack - slack % 4) / 4
if slack > 1000 then
  slack = 1000
end
local ends = start + period
if not probe and exp and exp >= ends - slack and exp <= ends + slack and cost < EXACT / 2 then
  local r = redis.pcall('INCRBY', key, cost)
  if type(r) == 'number' then
    local before = r - cost
    if r < EXACT and before >= 0 then
      count = before
      if not charge then
        if count + cost <= limit then
          return string.format('1 0 %d %d 0', limit - count - cost, to_end)
        end
        redis.call('INCRBY', key, -cost)
        if penalty == 0 then
          -- Refused without a penalty: deny(count) (see the rest), inline.
          local retry = to_end
          if cost > limit then
            retry = period
          end
          local remaining = limit - count
          if remaining < 0 then
            remaining = 0
          end
          return string.format('0 %d %d %d 0', retry, remaining, to_end)
        end
      end
    else
      redis.call('INCRBY', key, -cost)
      if before == -1 then
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
if not count then
  raw = exp and redis.call('GET', key)
  if raw == MARKER then
    -- Blocked by the penalty marker until it expires (status 2, see the
    -- prelude).
    local left = exp - now
    return string.format('2 %d 0 %d %d', left, left, exp)
  end
end
