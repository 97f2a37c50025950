-- The calls alone: the sliding window's common path (PEXPIRETIME, then
-- INCRBY), after TIME.
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local k = KEYS[1]
local pexp = redis.call('PEXPIRETIME', k)
if redis.call('INCRBY', k, 1) == 1 then
  redis.call('PEXPIREAT', k, now + 60000)
end
return '1 0 5 5 0'
