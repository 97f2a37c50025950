-- The time of the call (see the prelude), read once: after the checks'
-- arguments (ARGV[tail] on, `tail` set by the code in front of this) the
-- injected time and the expiry offset, or nothing: Valkey TIME.
local now, offset
local at = ARGV[tail]
if at == nil then
  -- Seconds and microseconds as decimal strings: each converted once by
  -- the arithmetic (tonumber, a call, converts a string twice), the
  -- microseconds floored to ms exactly (below 10^6) without math.floor.
  local t = redis.call('TIME')
  local us = t[2] + 0
  now = t[1] * 1000 + (us - us % 1000) / 1000
  offset = 0
else
  now = tonumber(at)
  offset = tonumber(ARGV[tail + 1])
end
if not (now and offset) then
  error('bad time argument')
end
