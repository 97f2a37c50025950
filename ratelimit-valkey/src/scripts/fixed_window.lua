-- Fixed window: counts requests per calendar window of `period`.
--
-- ARGV[p]     limit
-- ARGV[p + 1] period in ms
-- ARGV[p + 2] cost of this request
-- Reply       the decision (see the prelude)
--
-- Storage: the count as an integer (stored in the key object itself); the
-- key expires at the window's end, which also says which window it counts
-- (give or take the drift of a key moved between nodes, see `ends_at`).

-- This check's numbers (set by the algorithm, read by the helpers).
local limit, period, cost, start, to_end

-- Refused with `count` in the window: Retry-After is the window's end, or
-- a whole period for a cost that can never fit.
local function deny(count, old)
  local retry = to_end
  if cost > limit then
    retry = period
  end
  local remaining = limit - count
  if remaining < 0 then
    remaining = 0
  end
  return refuse(retry, remaining, to_end, old)
end
