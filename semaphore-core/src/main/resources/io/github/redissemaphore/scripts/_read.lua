-- Shared part 2 (see _args.lua): the keys, the server time and the state, in two commands, and
-- nothing written. ID (the id the script is about, as sent, or ' ' when none) is declared by the
-- script before it; its record comes with the state. It needs nothing of _args.lua, so a script
-- with a fast path for its usual case (acquire, release) includes it first, then the fast path,
-- then _args.lua and _load.lua (which makes sense of what was read): the usual case builds none of
-- the functions the general path needs.

local DEADLINES, STATE, QUEUE = KEYS[1], KEYS[2], KEYS[3]
-- A capped semaphore (see _keys.lua) has two keys more, and ARGV[1] names the key of the call
-- (KEY; false for a call about the cap as a whole). Its ids are stored as "<key> <id>" (ID then
-- names that member), so every entry tells its key.
local HEADS, READY, KEY = KEYS[4], KEYS[5], false
-- A semaphore with a rate (see _rate.lua) has its window as the fourth key, and no cap (so four
-- keys, where a capped one has five), and ARGV[1] "<permits> <rate-limit> <rate-period ms>".
local RATE, RATE_TEXT = false, nil
if #KEYS == 4 then
  HEADS, RATE = nil, KEYS[4]
end
-- Keys outlive the last lease or heartbeat by at least KEY_MIN_MARGIN_MS. When a deadline reaches
-- past that, every key's expiry moves out to twice the new horizon plus KEY_MARGIN_MS, so most
-- calls set no TTL at all, and an idle semaphore is gone within 2 x lease + 5 s.
local KEY_MIN_MARGIN_MS = 1000
local KEY_MARGIN_MS = 5000

-- Server time only: clients' clocks never matter. (A string in arithmetic is a number in Lua.)
local clock = redis.call('TIME')
local NOW_US = clock[1] * 1000000 + clock[2]
local NOW_MS = (NOW_US - NOW_US % 1000) / 1000

-- The configured limits out of ARGV[1] (see _names.lua): TOTAL_TEXT, the limit of the state's
-- counters, which ' limits' holds when nothing is special (an uncapped semaphore's permits: all
-- of ARGV[1]; a capped one's total-permits); capped only, LIMIT_TEXT, its permits (each key's
-- limit), and KEY_USED, the permits the call's key holds when it is usual (0 without keys; a
-- capped semaphore's key with no waiter and no runtime limit, called as the previous call was
-- configured: its used as text; else false). The short paths of acquire and release need no more.
local S, TOTAL_TEXT, KEY_USED, LIMIT_TEXT = nil, ARGV[1], 0, nil
if HEADS then
  TOTAL_TEXT, LIMIT_TEXT, KEY = string.match(ARGV[1] or '', '^(%d+) (%d+) ?(%S*)$')
  if not KEY or #KEY > 200 then
    error('semaphore script: ARGV[1] must be "<total limit> <key limit> <key>", the key of 0..200 characters'
        .. ' without whitespace, but was ' .. tostring(ARGV[1]), 0)
  end
  if #KEY == 0 then
    KEY = false
  elseif ID ~= ' ' then
    ID = KEY .. ' ' .. ID
  end
  -- S[8]: the counters of the call's key; S[9]: the key limit the previous call was configured
  -- with (see _keys.lua).
  S = redis.call('HMGET', STATE, ' used', ' seq', ' expires', ' waiters', ' next', ' limits', ID,
      KEY and ' k:' .. KEY or ' ', ' each')
  KEY_USED = KEY and S[9] == LIMIT_TEXT and string.match(S[8] or '0 0 - 0', '^(%d+) 0 %- 0$')
else
  if RATE then
    TOTAL_TEXT, RATE_TEXT = string.match(ARGV[1] or '', '^(%d+) (%d+ %d+)$')
    if not TOTAL_TEXT then
      error('semaphore script: ARGV[1] must be "<limit> <rate limit> <rate period ms>", three integers, but was '
          .. tostring(ARGV[1]), 0)
    end
  end
  -- S[8]: ' rate', the rate of the last call that differed from the one before ('-': none; absent:
  -- none known), so a JVM configured with another rate learns of the mismatch (_rate.lua); S[9]:
  -- ' rover', the runtime rate an operator set (absent: none), which every call with a rate follows.
  S = redis.call('HMGET', STATE, ' used', ' seq', ' expires', ' waiters', ' next', ' limits', ID, ' rate',
      ' rover')
end
