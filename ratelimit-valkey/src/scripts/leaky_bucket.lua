-- Leaky bucket, meter form (GCRA): holds up to `burst` requests, starts
-- empty, drains at `limit` per `period`. The state is the theoretical
-- arrival time (TAT) as a pair (ms, frac), frac in 1/limit ms, as the core
-- keeps it; one request is `period` ticks of 1/limit ms.
--
-- ARGV[p]     limit
-- ARGV[p + 1] cost * period / limit, whole ms (a charge's cost * period at
--             most 2^51)
-- ARGV[p + 2] cost * period mod limit (frac)
-- ARGV[p + 3] burst * period / limit, whole ms (the tolerance)
-- ARGV[p + 4] burst * period mod limit (frac)
-- ARGV[p + 5] period in ms (one request is max(period, 1) ticks)
-- Reply       the decision (see the prelude)
--
-- Storage: frac as an integer; the key expires at ceil(TAT), which gives
-- tat_ms back. The caller checks that every ms value stays below 2^52.
--
-- The leaky bucket check, part one: its numbers and the key, a penalty
-- marker decided here (inline, no function made). The rest of the check
-- (leaky_bucket_rest.lua) follows the shared helpers.

-- The parameters are ours, decimal integers: `+ 0` converts each once
-- (tonumber, a call, converts a string twice): the limit, one request's
-- cost (ms, frac), the tolerance (ms, frac), and one request's ticks.
local limit = argv[p] + 0
local c_ms, c_frac = argv[p + 1] + 0, argv[p + 2] + 0
local t_ms, t_frac = argv[p + 3] + 0, argv[p + 4] + 0
local period = argv[p + 5] + 0
local ticks = period
if ticks < 1 then
  ticks = 1
end

local raw = exp and redis.call('GET', key)
if raw == MARKER then
  -- Blocked by the penalty marker until it expires (status 2, see the
  -- prelude).
  local left = exp - now
  return string.format('2 %d 0 %d %d', left, left, exp)
end
