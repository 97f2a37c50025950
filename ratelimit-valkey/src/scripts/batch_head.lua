-- The batch script: N checks of one request, KEYS[i] the key of check i
-- (in a cluster, keys of one hash slot). Each check's arguments in turn
-- from ARGV[1]: its head (its algorithm's digit first: 1 fixed window, 2
-- sliding window, 3 token bucket, 4 leaky bucket, 5 distinct; see the
-- prelude), then its parameters; then the time if injected (at `tail`,
-- read by time.lua after this).
--
-- Reply: one string of N lines, each check's decision (see the prelude)
-- or its error as "-CODE message": one check's error (a key of the wrong
-- type, an argument out of range) leaves the others' decisions as they
-- are.
--
-- Only the functions of the algorithms the batch uses are made: each is
-- wrapped in `if uses<index> then ... end` (see scripts.rs). Five locals,
-- not a table: a table is built anew on every call.
local uses1, uses2, uses3, uses4, uses5
local tail
do
  local o = 1
  for _ = 1, #KEYS do
    -- The check's head, then its parameters: `o` moves past them (1 + the
    -- algorithm's parameters, see each header). A head longer than its
    -- digit (a mode, penalty or cost, which begin.lua reads) is taken by
    -- its first character.
    local a = ARGV[o]
    if a and #a > 1 then
      a = string.sub(a, 1, 1)
    end
    if a == '1' then
      uses1, o = true, o + 3
    elseif a == '2' then
      uses2, o = true, o + 3
    elseif a == '3' then
      uses3, o = true, o + 4
    elseif a == '4' then
      uses4, o = true, o + 4
    elseif a == '5' then
      uses5, o = true, o + 5
    else
      error('bad algorithm argument')
    end
  end
  -- Then nothing (Valkey TIME) or the time and the offset.
  local n = #ARGV
  if o ~= n + 1 and o ~= n - 1 then
    error('wrong number of arguments for the keys')
  end
  tail = o
end
