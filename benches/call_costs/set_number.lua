-- The calls alone: one read (GET) and one write with the expiry (SET
-- PXAT) of a number, which Valkey keeps as an integer, after TIME.
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local k = KEYS[1]
local raw = redis.call('GET', k)
redis.call('SET', k, -40000000000010, 'PXAT', now + 60000)
return '1 0 5 5 0'
