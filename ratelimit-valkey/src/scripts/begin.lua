-- Starts one check (see the prelude): its key `k`, its head at ARGV[o]
-- (`ALG`, its algorithm's digit, is the head of a count of cost 1 without
-- a penalty); its parameters follow it. Inline code, not a function:
-- scripts.rs puts it in front of every check, after
-- `local ALG = '<digit>'`.
--
-- The check's state and constants are locals of the check (in the batch
-- script, of its algorithm's function), not of the script: a local of the
-- script is an upvalue in a function, which costs each function made
-- (the batch's, a helper's) and each access.

-- Integers below this are exact in a Lua number.
local EXACT = 9007199254740992

-- The value of a "blocked until" penalty marker (see `refuse`).
local MARKER = '-1'

-- The check being decided: its key, penalty in ms, mode, cost (of a fixed
-- window, sliding window, token bucket or leaky bucket check: distinct's
-- is 1), and the key's expiry as Valkey holds it (`pexp`: -2
-- absent, -1 none, else Unix ms, plus the offset with injected time) and
-- in script time (`exp`: nil when absent, without expiry, or already
-- past; a stale key counts as absent).
local key = k
-- ARGV as a local: the global is looked up once per check.
local argv = ARGV
local penalty, probe, charge, cost = 0, false, false, 1
local head = argv[o]
-- A count of cost 1 without a penalty (the common case): the head is the
-- digit alone, compared as a string (interned: one pointer compare).
if head ~= ALG then
  -- (Checks here and below raise their error without a call to assert: a
  -- call costs even when it passes.)
  local a, mode, ms, c = string.match(head, '^(%d)([012])(%d*)x?(%d*)$')
  if a ~= ALG then
    error('bad mode, penalty or cost argument')
  end
  probe, charge = mode == '1', mode == '2'
  -- The penalty's digits (none: 0); a probe starts none.
  if ms ~= '' and not probe then
    penalty = ms + 0
  end
  -- The cost's digits, after an `x` (none: 1).
  if c ~= '' then
    cost = c + 0
  end
end
local pexp = redis.call('PEXPIRETIME', key)
local exp
if pexp >= 0 and pexp - offset > now then
  exp = pexp - offset
end
local p = o + 1
