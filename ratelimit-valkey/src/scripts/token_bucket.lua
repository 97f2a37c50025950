-- Token bucket: up to `burst` tokens, starts full, refills at `limit` per
-- `period`; a request takes `cost` tokens. Tokens are counted in units of
-- 1/period of a token, as the core does, so no fraction is rounded.
--
-- ARGV[p]     limit (refill units per ms)
-- ARGV[p + 1] capacity: burst * period
-- ARGV[p + 2] this request's need: cost * period (a charge's at most 2^51)
-- ARGV[p + 3] period in ms (Retry-After of a cost above the burst)
-- Reply       the decision (see the prelude)
--
-- Storage: the units spent, as an integer; the key expires when the bucket
-- is full again, updated_ms + ceil(spent / limit), which gives updated_ms
-- back. The caller checks that capacity + need < 2^53 (for a charge:
-- capacity + period < 2^52).
local MAX_CHARGED = 2251799813685248

-- This check's numbers (set by the algorithm, read by the helpers): `raw`
-- is what the key holds, `at` when the bucket was last drained.
local limit, raw, at

local function ceil_div(x, d)
  local q, r = divmod(x, d)
  if r > 0 then
    return q + 1
  end
  return q
end

local function store(units)
  if units > 0 then
    set_until(int(units), at + ceil_div(units, limit), raw)
  elseif pexp ~= -2 then
    redis.call('DEL', key)
  end
end

