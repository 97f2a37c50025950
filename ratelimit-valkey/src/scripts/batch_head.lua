-- The batch script: N checks of one request, KEYS[i] the key of check i
-- (in a cluster, keys of one hash slot). After ARGV[1-2] (see the
-- prelude), each check's arguments in turn: its algorithm's index (1
-- fixed window, 2 sliding window, 3 token bucket, 4 leaky bucket, 5
-- distinct), then its penalty, mode and parameters.
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
do
  local o = 3
  for _ = 1, #KEYS do
    -- The algorithm's index, then its penalty, mode and parameters: `o`
    -- moves past them (3 + the algorithm's parameters, see each header).
    local a = ARGV[o]
    if a == '1' then
      uses1, o = true, o + 6
    elseif a == '2' then
      uses2, o = true, o + 6
    elseif a == '3' then
      uses3, o = true, o + 7
    elseif a == '4' then
      uses4, o = true, o + 9
    elseif a == '5' then
      uses5, o = true, o + 7
    else
      error('bad algorithm argument')
    end
  end
  if o ~= #ARGV + 1 then
    error('wrong number of arguments for the keys')
  end
end
