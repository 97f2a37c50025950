-- Shared prelude, concatenated at build time in front of every algorithm
-- script (see scripts.rs). It reads the time, the key's expiry and the
-- penalty marker, and defines exact integer helpers.
--
-- KEYS[1]  the subject's key: <prefix>{<subject hex>}:<namespace>
-- ARGV[1]  now in Unix ms, or "" to read Valkey TIME
-- ARGV[2]  expiry offset in ms: 0 with Valkey TIME; with injected time a
--          constant added to every expiry so that past injected times
--          still give live keys (the script itself decides staleness)
-- ARGV[3]  penalty in ms (0: none)
-- ARGV[4..] the algorithm's parameters (see each algorithm's header)
--
-- Every reply is one string of six decimal integers separated by spaces,
-- "status now until s1 s2 s3" (see `reply`):
--   status 0 refused, 1 admitted, 2 blocked by a penalty (until = its end,
--   nothing counted), 3 refused and a penalty started (until = its end),
--   4 not counted (distinct without a value);
--   s1.. the algorithm's state before this request, from which the caller
--   recomputes Retry-After, remaining and reset exactly.
--
-- Numbers: Lua numbers are doubles, exact below 2^53. The caller checks
-- that every value stays below that bound; numbers are written with
-- string.format('%d') since tostring would use %.14g.

assert(#KEYS == 1, 'expected 1 key')
local key = KEYS[1]
local now, offset
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  offset = 0
else
  now = tonumber(ARGV[1])
  offset = tonumber(ARGV[2])
end
local penalty = tonumber(ARGV[3])
assert(now and offset and penalty, 'bad time or penalty argument')

local function int(x)
  return string.format('%d', x)
end

-- floor(x / d) and x mod d for integers 0 <= x < 2^53, d >= 1, exactly.
local function divmod(x, d)
  local q = math.floor(x / d)
  local r = x - q * d
  if r < 0 then
    q = q - 1
    r = r + d
  elseif r >= d then
    q = q + 1
    r = r - d
  end
  return q, r
end

-- The reply. A string: Valkey turns a Lua table into an array reply
-- element by element, which costs more than formatting one string.
local function reply(status, untl, s1, s2, s3)
  return string.format('%d %d %d %d %d %d', status, now, untl, s1, s2, s3)
end

-- The key's expiry as Valkey holds it: -2 absent, -1 none, else Unix ms
-- (plus the offset with injected time).
local pexp = redis.call('PEXPIRETIME', key)

-- The key's expiry in script time, or nil when absent, without expiry, or
-- already past (a stale key counts as absent).
local exp = nil
if pexp >= 0 and pexp - offset > now then
  exp = pexp - offset
end

-- Integers below this are exact in a Lua number.
local EXACT = 9007199254740992

-- Stores `value` (a decimal string) until `at`. `old` is what the key
-- holds now when the script knows it (the string GET returned, or an exact
-- number), else nil.
--
-- A value that fits in 64 bits is kept as an integer inside the key object
-- (SET from a script would store a string): an integer the script knows is
-- changed in place with INCRBY by the difference, and the expiry is only
-- written when it moves; otherwise the key is made afresh with INCRBY.
local function set_until(value, at, old)
  local target = at + offset
  if #value > 18 then
    redis.call('SET', key, value, 'PXAT', int(target))
    return
  end
  local o = old and tonumber(old)
  local v = tonumber(value)
  if o and v and o > -EXACT and o < EXACT and v < EXACT then
    local ok = true
    if v ~= o then
      ok = type(redis.pcall('INCRBY', key, int(v - o))) == 'number'
    end
    if ok then
      if pexp ~= target then
        redis.call('PEXPIREAT', key, int(target))
      end
      return
    end
  end
  if pexp ~= -2 then
    redis.call('DEL', key)
  end
  redis.call('INCRBY', key, value)
  redis.call('PEXPIREAT', key, int(target))
end

local MARKER = '-1'

-- Refused by the algorithm: start the penalty if there is one. The key
-- becomes a "blocked until" marker expiring at its end, so counting starts
-- fresh after it. `old` as for set_until.
local function refuse(s1, s2, s3, old)
  if penalty > 0 then
    set_until(MARKER, now + penalty, old)
    return reply(3, now + penalty, s1, s2, s3)
  end
  return reply(0, 0, s1, s2, s3)
end
