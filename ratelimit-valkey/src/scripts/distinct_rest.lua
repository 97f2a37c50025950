-- The distinct check (see distinct.lua), after the shared helpers.
local period, max_bits, bit = tonumber(ARGV[p]), tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
local limit = tonumber(ARGV[p + 3])

if exp and redis.call('STRLEN', key) <= 2 and redis.call('GET', key) == MARKER then
  return blocked()
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
return refuse(to_end, 0, to_end, nil)
