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
--
-- So a live key (expiring at `exp`, after `now`) holds at most
-- (exp - now) * limit units now: exactly that less the rounding,
-- ceil(spent / limit) * limit - spent, when it was written at or before
-- `now`, and its `spent` otherwise, which is less. After a count that
-- fits, the key expires at exp + floor(need / limit) or one ms later
-- (again by the rounding), whichever was the write's time.
local MAX_CHARGED = 2251799813685248

-- This check's numbers (set by the algorithm, read by the helpers):
-- `old` is the number the key holds (nil when absent or not a number),
-- `at` when the bucket was last drained.
local limit, old, at

-- Stores `units` (> 0, below 2^53) until `until_ms`, as set_until does but
-- from numbers (no conversions): an INCRBY by the difference when the key
-- holds a number, the expiry written only when it moves (`pexp`, which the
-- count's GETEX may have moved already).
local function put(units, until_ms)
  local target = until_ms + offset
  if old and old > -EXACT and old < EXACT then
    if units == old or type(redis.pcall('INCRBY', key, units - old)) == 'number' then
      if pexp ~= target then
        redis.call('PEXPIREAT', key, target)
      end
      return
    end
  end
  if pexp ~= -2 then
    redis.call('DEL', key)
  end
  redis.call('INCRBY', key, units)
  redis.call('PEXPIREAT', key, target)
end
