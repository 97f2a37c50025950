-- Shared prelude, concatenated at build time in front of the algorithms
-- (see scripts.rs). It reads the time (once per call), defines exact
-- integer helpers, and `begin`, which reads one check's mode, penalty and
-- key expiry. Each algorithm has its helpers (`sliding_window.lua`) and
-- its check (`sliding_window_check.lua`, which reads its parameters from
-- ARGV[p]): one check's script runs the check at the top level (the
-- prelude, the helpers, `begin`, the check), the batch script as the body
-- of the algorithm's function of one check (`sliding_window = function(k,
-- o) begin(k, o) local p = o + 2 ... end`), so both run the same code (see
-- scripts.rs).
--
-- ARGV[1]  now in Unix ms, or "" to read Valkey TIME
-- ARGV[2]  expiry offset in ms: 0 with Valkey TIME; with injected time a
--          constant added to every expiry so that past injected times
--          still give live keys (the script itself decides staleness)
-- Then each check's arguments (one check's script: from ARGV[3]; the
-- batch script: after the algorithm's index, see batch_head.lua):
-- penalty  in ms (0: none)
-- mode     (see `CheckMode`): "0" count the request when it fits;
--          "1" probe: decide as a count would, write nothing, start no
--          penalty; "2" charge: add the cost whether or not it fits (the
--          total may pass the limit), and when it is then over the limit
--          answer as refused (Retry-After: until a request of cost 1
--          fits) and start the penalty. Distinct counts only.
-- params   the algorithm's parameters (see each algorithm's header; `p`
--          is the position of the first one)
--
-- Every decision is one string of five decimal integers separated by
-- spaces, "status retry remaining reset until" (see `reply`):
--   status 0 refused, 1 admitted, 2 blocked by a penalty (nothing
--   counted), 3 refused and a penalty started, 4 not counted (distinct
--   without a value);
--   retry     when refused, the wait in ms until a retry would be admitted
--             (the earliest admission, as the core computes it), else 0;
--   remaining how many more requests of cost 1 would be admitted now;
--   reset     ms until the subject's quota is whole again;
--   until     the penalty's end in Unix ms (status 2 and 3), else 0.
--
-- Numbers: Lua numbers are doubles, exact below 2^53. Every value is
-- computed exactly (products that could pass 2^53 go through `muldiv`);
-- the caller refuses parameters that would not fit and checks that every
-- reply value stays below 2^53. Numbers are written with
-- string.format('%d') since tostring would use %.14g; a number passed to
-- redis.call as an argument is written by Valkey itself, exactly for any
-- integer below 10^17 (no string.format needed there).
--
-- A Lua function is made anew on every call of a script (about 40 ns
-- each): helpers live at file level, not inside the algorithms, and the
-- batch script builds only the algorithms it uses.

local now, offset
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  offset = 0
else
  now = tonumber(ARGV[1])
  offset = tonumber(ARGV[2])
end
assert(now and offset, 'bad time argument')

-- How many parameters each algorithm takes, by index (1 fixed window, 2
-- sliding window, 3 token bucket, 4 leaky bucket, 5 distinct), a digit
-- each: `string.byte(PARAMS, i) - 48`. (A table would be built anew on
-- every call.)
local PARAMS = '33464'

-- The algorithms in the batch script, each a function of `p` (see above)
-- that returns the decision.
local fixed_window, sliding_window, token_bucket, leaky_bucket, distinct

-- The check being decided (set by `check`): its key, penalty in ms, mode,
-- and the key's expiry as Valkey holds it (`pexp`: -2 absent, -1 none,
-- else Unix ms, plus the offset with injected time) and in script time
-- (`exp`: nil when absent, without expiry, or already past; a stale key
-- counts as absent).
local key, penalty, probe, charge, pexp, exp

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

-- The reply. A string: Valkey turns a Lua table into an array reply
-- element by element, which costs more than formatting one string. (Each
-- %d is a sprintf: the hot replies below write their constant fields into
-- the format.)
local function reply(status, retry, remaining, reset, untl)
  return string.format('%d %d %d %d %d', status, retry, remaining, reset, untl)
end

-- Whether expiry `e` is the window end `target` (windows of `period`).
-- A key moved to another cluster node (MIGRATE, when slots are resharded)
-- keeps its time to live, not its expiry: it arrives a few ms later. So an
-- expiry within a second (a quarter period for short periods) of a window
-- end is that end; windows' ends are a period apart, so none is mistaken.
local function ends_at(e, target, period)
  if not e then
    return false
  end
  local slack = math.min(1000, math.floor((period - 1) / 4))
  return e >= target - slack and e <= target + slack
end

-- Blocked by the penalty marker that expires at `exp`.
local function blocked()
  local left = exp - now
  return string.format('2 %d 0 %d %d', left, left, exp)
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

-- Starts one check: its key `k`, its penalty and mode at ARGV[o] and
-- ARGV[o + 1]; its parameters follow them.
local function begin(k, o)
  key = k
  -- No penalty ("0", the common case) is compared, not converted.
  local mode = ARGV[o + 1]
  penalty = ARGV[o]
  if penalty == '0' then
    penalty = 0
  else
    penalty = tonumber(penalty)
  end
  probe, charge = mode == '1', mode == '2'
  assert(penalty and (probe or charge or mode == '0'), 'bad penalty or mode argument')
  if probe then
    penalty = 0
  end
  pexp = redis.call('PEXPIRETIME', key)
  exp = nil
  if pexp >= 0 and pexp - offset > now then
    exp = pexp - offset
  end
end
