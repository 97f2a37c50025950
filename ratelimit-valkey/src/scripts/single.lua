-- One check's script: KEYS[1] its key, its arguments from ARGV[3] (see the
-- prelude). The reply is its decision.
assert(#KEYS == 1, 'expected 1 key')
local index, run = next(algorithms)
assert(#ARGV == 4 + PARAMS[index], 'expected ' .. (4 + PARAMS[index]) .. ' arguments')
return check(KEYS[1], 3, run)
