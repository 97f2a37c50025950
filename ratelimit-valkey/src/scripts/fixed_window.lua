-- Fixed window: counts requests per calendar window of `period`.
--
-- ARGV[p]     limit
-- ARGV[p + 1] period in ms
-- ARGV[p + 2] cost of this request
-- Reply       the decision (see the prelude)
--
-- Storage: the count as an integer (stored in the key object itself); the
-- key expires at the window's end, which also says which window it counts
-- (give or take the drift of a key moved between nodes, see `ends_at`).
--
-- The fixed window check, part one: only its numbers (see the rest,
-- fixed_window_rest.lua, which follows the shared helpers).

-- This check's numbers (set by the rest, read by its helpers).
local limit, period, cost, start, to_end
