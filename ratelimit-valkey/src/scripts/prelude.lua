-- Shared prelude, concatenated at build time in front of the algorithms
-- (see scripts.rs). It reads the time (once per call) and declares what
-- every check shares. A check is `begin.lua` (its mode, penalty and key
-- expiry), then its algorithm's common path (`sliding_window.lua`, which
-- reads its parameters from ARGV[p]), then, when the check goes further,
-- the shared helpers (`helpers.lua`) and the rest of the algorithm
-- (`sliding_window_rest.lua`). One check's script runs the check at the
-- top level, the batch script as the body of the algorithm's function of
-- one check (`sliding_window = function(k, o) ... end`), so both run the
-- same code (see scripts.rs).
--
-- ARGV[1]  now in Unix ms, or "" to read Valkey TIME
-- ARGV[2]  only with a time in ARGV[1]: the expiry offset in ms, a
--          constant added to every expiry so that past injected times
--          still give live keys (the script itself decides staleness);
--          with Valkey TIME the offset is 0 and not sent
-- Then each check's arguments, from ARGV[first] (2 with Valkey TIME, else
-- 3), in turn (the batch script: one check after the other, see
-- batch_head.lua):
-- head     one string: the algorithm's digit (1 fixed window, 2 sliding
--          window, 3 token bucket, 4 leaky bucket, 5 distinct) alone for
--          the common case, a count of cost 1 without a penalty; else
--          followed by the mode's digit, the penalty in ms if any, and
--          `x` and the cost if not 1 (a fixed window, sliding window or
--          token bucket check's: the others' is in their parameters).
--          The mode (see `CheckMode`): "0" count the request when it
--          fits; "1" probe: decide as a count would, write nothing, start
--          no penalty; "2" charge: add the cost whether or not it fits
--          (the total may pass the limit), and when it is then over the
--          limit answer as refused (Retry-After: until a request of cost
--          1 fits) and start the penalty. Distinct counts only. E.g. "2"
--          (a sliding window count), "21" (its probe), "2030000" (a count
--          with a 30 s penalty), "22x5" (a charge of cost 5). A head is
--          one argument (each costs Valkey some 900 instructions: its RESP
--          parse, its Lua string, its ARGV slot, and a number's conversion
--          some 500 more) and the common one is compared as a string,
--          without a conversion; only another is parsed (begin.lua).
-- params   the algorithm's parameters (see each algorithm's header; `p`
--          is the position of the first one)
--
-- Every decision is one string of five decimal integers separated by
-- spaces, "status retry remaining reset until" (a string: Valkey turns a
-- Lua table into an array reply element by element, which costs more than
-- formatting one string; each reply is one string.format with its
-- constant fields written into the format, as each %d is a sprintf):
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
-- Functions: Lua 5.1 makes a function anew each time its definition runs
-- (OP_CLOSURE: a closure object and its upvalues, then the garbage
-- collector's work): about 600 server instructions for one with one
-- upvalue, nearer 2,000 with several (callgrind on valkey-server 9.1),
-- where a whole admitted sliding window count is about 53,000. So the
-- common paths (each algorithm's file says which: an admitted count, a
-- count refused without a penalty, a penalty marker) are written inline
-- and make no function: the helpers (`helpers.lua`, each algorithm's in
-- its `_rest.lua`) are defined after the common path, and only a check
-- that gets that far makes them. A check's state is local to the check
-- (see begin.lua). The batch script makes one function per algorithm it
-- uses (each check runs in a protected call).
--
-- Commands: each redis.call costs some 6,000 to 8,000 server instructions,
-- more than all the Lua of a check: a common path makes as few as it can
-- (an admitted sliding window count: TIME once per script call, then
-- PEXPIRETIME and INCRBY).

local now, offset, first
if ARGV[1] == '' then
  -- Seconds and microseconds as decimal strings: each converted once by
  -- the arithmetic (tonumber, a call, converts a string twice), the
  -- microseconds floored to ms exactly (below 10^6) without math.floor.
  local t = redis.call('TIME')
  local us = t[2] + 0
  now = t[1] * 1000 + (us - us % 1000) / 1000
  offset, first = 0, 2
else
  now = tonumber(ARGV[1])
  offset, first = tonumber(ARGV[2]), 3
end
if not (now and offset) then
  error('bad time argument')
end

-- The algorithms in the batch script, each a function of one check (its
-- key and the position of its arguments) that returns the decision.
local fixed_window, sliding_window, token_bucket, leaky_bucket, distinct
