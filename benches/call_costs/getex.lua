-- The calls alone: the token bucket's common path (PEXPIRETIME, GETEX
-- moving the expiry, then INCRBY), after TIME.
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local k = KEYS[1]
local pexp = redis.call('PEXPIRETIME', k)
if redis.call('GETEX', k, 'PXAT', now + 60000) then
  redis.call('INCRBY', k, -10000000000)
else
  redis.call('INCRBY', k, -40000000000010)
  redis.call('PEXPIREAT', k, now + 60000)
end
return '1 0 5 5 0'
