-- Fixed window: counts requests per calendar window of `period`.
--
-- KEYS[1]   the subject's key
-- ARGV[1-3] now, expiry offset, penalty (see the prelude)
-- ARGV[4]   limit
-- ARGV[5]   period in ms
-- ARGV[6]   cost of this request
-- Reply     {status, now, until, window_start, count_before, 0}
--
-- Storage: the count as an integer (stored in the key object itself); the
-- key expires at the window's end, which also says which window it counts.
assert(#ARGV == 6, 'fixed_window expects 6 arguments')
local limit, period, cost = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

local raw = exp and redis.call('GET', key)
if raw == MARKER then
  return {2, now, exp, 0, 0, 0}
end
local start = now - now % period
local count = 0
if raw and exp == start + period then
  count = tonumber(raw) or 0
end
if count + cost <= limit then
  set_until(int(count + cost), start + period)
  return {1, now, 0, start, count, 0}
end
return refuse(start, count, 0)
