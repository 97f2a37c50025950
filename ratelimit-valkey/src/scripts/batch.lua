-- The batch script's main part (see batch_head.lua): each check in turn,
-- each in its own protected call.
local out = {}
local o = 3
for i = 1, #KEYS do
  local a = tonumber(ARGV[o])
  local ok, r = pcall(check, KEYS[i], o + 1, algorithms[a])
  if not ok then
    -- A command's error (WRONGTYPE ...) or the script's own (an argument
    -- out of range): answered as an error reply, with a code.
    if type(r) == 'table' then
      r = r.err
    end
    r = tostring(r)
    if not string.find(r, '^%u+ ') then
      r = 'ERR ' .. r
    end
    r = redis.error_reply(r)
  end
  out[i] = r
  o = o + 3 + PARAMS[a]
end
return out
