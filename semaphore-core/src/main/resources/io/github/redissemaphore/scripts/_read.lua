-- Shared part 2 (see _args.lua): the server time and the state, in two commands, and nothing
-- written. ID (the id the script is about, as sent, or NO_ID) is declared by the script before
-- it; its record comes with the state. A script with a fast path for its usual case (acquire,
-- release) puts it between this part and _load.lua, which makes sense of what was read.

-- Server time only: clients' clocks never matter. (A string in arithmetic is a number in Lua.)
local clock = redis.call('TIME')
local NOW_US = clock[1] * 1000000 + clock[2]
local NOW_MS = (NOW_US - NOW_US % 1000) / 1000

local S = redis.call('HMGET', STATE, ' used', ' seq', ' expires', ' waiters', ' next', ' limits', ID)
