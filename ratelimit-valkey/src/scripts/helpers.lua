-- The helpers the checks share (see the prelude), defined past each
-- algorithm's common path (`sliding_window.lua`) and in front of the rest
-- of its check (`sliding_window_rest.lua`): only a check that gets this far
-- makes them (a function is made anew each time its definition runs).

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

-- floor(a * b / d) and its remainder, exactly, for integers 0 <= a < 2^53,
-- 0 <= b < 2^31 and 1 <= d < 2^31, when the quotient is below 2^53: a is
-- taken in three limbs of 21 bits so that no partial sum passes 2^53.
local LIMB = 2097152
local function muldiv(a, b, d)
  local p = a * b
  if p < 9007199254740992 then
    return divmod(p, d)
  end
  local a0 = a % LIMB
  local hi = (a - a0) / LIMB
  local a1 = hi % LIMB
  local q, r = divmod((hi - a1) / LIMB * b, d)
  local q1, r1 = divmod(r * LIMB + a1 * b, d)
  local q0, r0 = divmod(r1 * LIMB + a0 * b, d)
  return (q * LIMB + q1) * LIMB + q0, r0
end

-- Whether expiry `e` (of a live key) is the window end `target` (windows
-- of `period`).
-- A key moved to another cluster node (MIGRATE, when slots are resharded)
-- keeps its time to live, not its expiry: it arrives a few ms later. So an
-- expiry within a second (a quarter period for short periods) of a window
-- end is that end; windows' ends are a period apart, so none is mistaken.
local function ends_at(e, target, period)
  local slack = math.min(1000, math.floor((period - 1) / 4))
  return e >= target - slack and e <= target + slack
end

-- Stores `value` (a decimal string) until `at`. `old` is what the key
-- holds now when the script knows it (the string GET returned, or an exact
-- number), else nil.
--
-- A value that fits in 64 bits is kept as an integer inside the key object
-- (SET from a script would store a string): an integer the script knows is
-- changed in place with INCRBY by the difference, and the expiry is only
-- written when it moves; a missing key is made with INCRBY, another
-- value replaced with SET.
local function set_until(value, at, old)
  local target = at + offset
  if #value > 18 then
    redis.call('SET', key, value, 'PXAT', target)
    return
  end
  local o = old and tonumber(old)
  local v = tonumber(value)
  if o and v and o > -EXACT and o < EXACT and v > -EXACT and v < EXACT then
    local ok = true
    if v ~= o then
      ok = type(redis.pcall('INCRBY', key, v - o)) == 'number'
    end
    if ok then
      if pexp ~= target then
        redis.call('PEXPIREAT', key, target)
      end
      return
    end
  end
  -- No key: made with INCRBY. A key of other content: one SET over it;
  -- never DEL then write, which a slot being migrated refuses (the key is
  -- no longer local).
  if pexp == -2 then
    redis.call('INCRBY', key, value)
    redis.call('PEXPIREAT', key, target)
  else
    redis.call('SET', key, value, 'PXAT', target)
  end
end

-- Refused by the algorithm, which says `retry`, `remaining` and `reset`:
-- start the penalty if there is one. The key becomes a "blocked until"
-- marker expiring at its end, so counting starts fresh after it. `old` as
-- for set_until.
local function refuse(retry, remaining, reset, old)
  if penalty > 0 then
    set_until(MARKER, now + penalty, old)
    return string.format('3 %d 0 %d %d', penalty, penalty, now + penalty)
  end
  return string.format('0 %d %d %d 0', retry, remaining, reset)
end
