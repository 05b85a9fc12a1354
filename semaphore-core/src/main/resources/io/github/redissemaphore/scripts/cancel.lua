-- cancel: a waiter gives up (timeout, interrupt, cancel, shutdown, a call that failed). If it was
-- granted meanwhile (its message may still be on the way) the caller learns so and the permit
-- never leaks: either the caller takes it (release 0: its claim is confirmed as a full lease) or
-- it is given back here (release 1).
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
--   (a semaphore with a rate: deadlines, state, queue, rate, and ARGV 1 "<permits> <rate-limit> <rate-period ms>"; _rate.lua)
-- ARGV 1, the limit: the caller's permits (TOTAL_TEXT); a capped semaphore's "<total-permits>
--   <permits> <key>" (TOTAL_TEXT, LIMIT_TEXT, KEY; see _names.lua)
-- ARGV: 1 limit, 2 waiter id, 3 release (1: give back a permit granted meanwhile)
-- Returns: {used, waiters, time, earliest, limits, token}; token 0 when it left
--   the queue (or was unknown), else the fencing token of the permit it had been granted.
-- Keeps I1..I6 for an id in any state: a waiter leaves the queue with its record and deadline; a
-- holder keeps its record until it is dropped, so its count is always known.
--@include _names.lua
--@include _args.lua
local ID = argId(2)
local release = ARGV[3] == '1'
--@include _read.lua
--@include _load.lua
--@include _keys.lua
--@include _rate.lua
--@include _purge.lua

local count, lease, token = string.match(REC or '', '^(%d+) (%d+) %d+ (%d+) ')
OWN1 = 0
if token and token ~= '0' then
  OWN1 = token + 0
  if release then
    redis.call('ZREM', DEADLINES, ID)
    redis.call('HDEL', STATE, ID)
    USED = USED - count
    if USED < 0 then
      USED = 0
    end
    if HEADS and KEY then
      local ks = touch(KEY)
      ks.used = ks.used - count
    end
  else
    setDeadline(ID, lease)
  end
elseif token or WAITERS > 0 then
  -- A waiter (or a queue entry whose record a hand outside the scripts removed).
  local ticket = HEADS and KEY and redis.call('ZSCORE', QUEUE, ID)
  if ticket then
    waiterLeft(KEY, ARGV[2], ticket)
  end
  WAITERS = WAITERS - redis.call('ZREM', QUEUE, ID)
  redis.call('ZREM', DEADLINES, ID)
  if token then
    redis.call('HDEL', STATE, ID)
  end
end
--@include _grant.lua
--@include _finish.lua
return R
