-- The batch script's main part (see batch_head.lua): each check in turn,
-- each in its own protected call. The reply is one string, the checks'
-- replies one per line: an array reply costs Valkey far more (several
-- microseconds for a table of one item) than formatting one string.
-- The replies so far, joined (one concatenation per check: cheaper than a
-- table and table.concat for the few checks of a request).
local out
local o = 1
for i = 1, #KEYS do
  -- The check's head (checked by batch_head.lua): its algorithm's digit
  -- alone is compared as a string, no conversion; a longer head by its
  -- first character. The next check's arguments are `n` further (as
  -- batch_head.lua).
  local a = ARGV[o]
  if #a > 1 then
    a = string.sub(a, 1, 1)
  end
  local run, n = distinct, 5
  if a == '1' then
    run, n = fixed_window, 3
  elseif a == '2' then
    run, n = sliding_window, 3
  elseif a == '3' then
    run, n = token_bucket, 4
  elseif a == '4' then
    run, n = leaky_bucket, 4
  end
  -- The time as arguments: a function that reads the script's locals
  -- holds them as upvalues, which cost it when it is made (each call) and
  -- on each read (about 1,300 instructions for a batch of two checks).
  local ok, r = pcall(run, KEYS[i], o, now, offset)
  if not ok then
    -- A command's error (WRONGTYPE ...) or the script's own (an argument
    -- out of range): "-CODE message" on its line, as RESP writes errors.
    if type(r) == 'table' then
      r = r.err
    end
    r = string.gsub(tostring(r), '[\r\n]', ' ')
    if not string.find(r, '^%u+ ') then
      r = 'ERR ' .. r
    end
    r = '-' .. r
  end
  if out then
    out = out .. '\n' .. r
  else
    out = r
  end
  o = o + n
end
return out or ''
