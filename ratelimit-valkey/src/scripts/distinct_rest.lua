-- The distinct check, the rest (see distinct.lua): a refusal that starts
-- a penalty.
return refuse(to_end, 0, to_end, nil)
