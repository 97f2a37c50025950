-- Distinct: how many different values a subject sends per period, from the
-- bits set in a 1024-bit map (linear counting). The period starts with the
-- subject's first value.
--
-- ARGV[p]     period in ms
-- ARGV[p + 1] the most bits that may be set while the estimate is within
--             the limit (computed by the core)
-- ARGV[p + 2] the value's bit, 0 to 1023, or -1 for a request without the
--             value (not counted; only a penalty refuses it)
-- ARGV[p + 3] limit
-- Reply       the decision (see the prelude)
--
-- Storage: the 128-byte map as a string (SETBIT); the key expires at the
-- period's end, which gives the period's start back. A penalty marker is a
-- 2-byte string, so the length tells them apart without reading the map.
--
-- The distinct check, part one: all of it but a refusal with a penalty
-- (distinct_rest.lua, after the shared helpers), inline (no function made).

-- The parameters are ours, decimal integers: `+ 0` converts each once
-- (tonumber, a call, converts a string twice).
local period, max_bits, bit = argv[p] + 0, argv[p + 1] + 0, argv[p + 2] + 0
local limit = argv[p + 3] + 0

if exp and redis.call('STRLEN', key) <= 2 and redis.call('GET', key) == MARKER then
  -- Blocked by the penalty marker until it expires (status 2, see the
  -- prelude).
  local left = exp - now
  return string.format('2 %d 0 %d %d', left, left, exp)
end
if bit < 0 then
  return string.format('4 0 %d 0 0', limit)
end
local start
if exp then
  start = exp - period
else
  start = now
  if start < 1 then
    start = 1
  end
  if pexp ~= -2 then
    redis.call('DEL', key)
  end
  -- Allocate the whole map at once: its length stays 128 bytes.
  redis.call('SETBIT', key, 1023, 0)
  redis.call('PEXPIREAT', key, start + period + offset)
end
redis.call('SETBIT', key, bit, 1)
local set = redis.call('BITCOUNT', key)
local to_end = start + period - now
if set <= max_bits then
  -- The estimate -m ln(clear / m) rounded, as the core's table has it:
  -- no entry lies within 10^-6 of a half (a test checks), so any libm's
  -- last-bit difference gives the same count.
  local est = math.floor(-1024 * math.log((1024 - set) / 1024) + 0.5)
  local remaining = limit - est
  if remaining < 0 then
    remaining = 0
  end
  return string.format('1 0 %d %d 0', remaining, to_end)
end
if penalty == 0 then
  -- Refused without a penalty: refuse() (see helpers.lua), inline.
  return string.format('0 %d 0 %d 0', to_end, to_end)
end
