-- Starts one check (see the prelude): its key `k`, its penalty and mode at
-- ARGV[o] and ARGV[o + 1]; its parameters follow them. Inline code, not a
-- function: scripts.rs puts it in front of every check.
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
local p = o + 2
