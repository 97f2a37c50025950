-- The calls alone: GET, then SET PXAT of a string holding three numbers
-- (a time, the units spent, the limit) made with string.format, after
-- TIME.
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local k = KEYS[1]
local raw = redis.call('GET', k)
redis.call('SET', k, string.format('%d %d %s', now, 40000, '0000000010'), 'PXAT', now + 60000)
return '1 0 5 5 0'
