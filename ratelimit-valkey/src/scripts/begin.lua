-- Starts one check (see the prelude): its key `k`, its penalty and mode at
-- ARGV[o] and ARGV[o + 1]; its parameters follow them. Inline code, not a
-- function: scripts.rs puts it in front of every check.
--
-- The check's state and constants are locals of the check (in the batch
-- script, of its algorithm's function), not of the script: a local of the
-- script is an upvalue in a function, which costs each function made
-- (the batch's, a helper's) and each access.

-- Integers below this are exact in a Lua number.
local EXACT = 9007199254740992

-- The value of a "blocked until" penalty marker (see `refuse`).
local MARKER = '-1'

-- The check being decided: its key, penalty in ms, mode, and the key's
-- expiry as Valkey holds it (`pexp`: -2 absent, -1 none, else Unix ms,
-- plus the offset with injected time) and in script time (`exp`: nil when
-- absent, without expiry, or already past; a stale key counts as absent).
local key = k
-- ARGV as a local: the global is looked up once per check.
local argv = ARGV
local mode = argv[o + 1]
-- No penalty ("0", the common case) is compared, not converted.
local penalty = argv[o]
if penalty == '0' then
  penalty = 0
else
  penalty = tonumber(penalty)
end
local probe, charge = mode == '1', mode == '2'
-- (Checks here and below raise their error without a call to assert: a
-- call costs even when it passes.)
if not (penalty and (probe or charge or mode == '0')) then
  error('bad penalty or mode argument')
end
if probe then
  penalty = 0
end
local pexp = redis.call('PEXPIRETIME', key)
local exp
if pexp >= 0 and pexp - offset > now then
  exp = pexp - offset
end
local p = o + 2
