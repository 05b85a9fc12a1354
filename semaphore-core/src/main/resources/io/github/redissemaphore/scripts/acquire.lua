-- acquire: grants permits now, or puts the caller in the queue when it will wait.
-- KEYS: deadlines, state, queue (see _args.lua)
-- ARGV: 1 limit, 2 permit id, 3 count, 4 lease ms, 5 wait (1: queue when refused, 0: don't),
--       6 fair (1: refuse while others wait, 0: take free permits regardless), 7 waiter heartbeat
--       ms (also the claim lease of a grant from the queue), 8 inbox channel of the caller's JVM,
--       9 owner (host/pid/thread)
-- Returns: {used, waiters, time, earliest, limits, status, token}
--   status 1: granted, token = fencing token; 2: queued, token = ticket; 0: refused, token = 0
--   (also at once when count exceeds the limit of the call: an override below the request)
-- Idempotent per id (a client library may send a command twice after a reconnect): an id that
-- holds already is answered granted with its token (its lease confirmed in full), an id that
-- waits already is answered queued with its ticket (its heartbeat refreshed). Keeps I1..I6.
-- Uncontended, it runs 4 commands (TIME, HMGET, ZADD, HSET), and a PEXPIREAT when the deadlines
-- key is new or a deadline reaches past the keys' expiry.
--@include _args.lua
local ID = ARGV[2] or NO_ID
--@include _load.lua
argId(2)
local count = argNumber(3, 1, CONFIGURED)
local lease = argNumber(4, 1, 86400000)
local wait, fair = ARGV[5] == '1', ARGV[6] == '1'
local heartbeat = argNumber(7, 1, 86400000)
local inbox, owner = argId(8), ARGV[9] or ''
--@include _purge.lua
--@include _grant.lua

local token = REC and string.match(REC, '^%d+ %d+ %d+ (%d+) ')
-- The ticket of a repeated call of a waiter (read only when its record says it waits).
local ticket = token == '0' and redis.call('ZSCORE', QUEUE, ID)
local regrant = false
if token and token ~= '0' then
  -- It holds already: a repeated call, or a grant from the queue it has not heard of yet. Its
  -- lease is confirmed in full.
  setDeadline(ID, string.match(REC, '^%d+ (%d+) '))
  OWN1, OWN2 = 1, token + 0
elseif not ticket and USED + count <= LIMIT and (WAITERS == 0 or not fair) then
  setDeadline(ID, lease)
  NSETS = NSETS + 2
  SETS[NSETS - 1] = ID
  SETS[NSETS] = ARGV[3] .. ' ' .. ARGV[4] .. ' ' .. ARGV[7] .. ' ' .. nextSeq() .. ' ' .. inbox .. ' ' .. owner
  USED = USED + count
  OWN1, OWN2 = 1, SEQ
elseif not wait then
  OWN1, OWN2 = 0, 0
elseif count > LIMIT then
  -- An override below the request (I6): it cannot be served while that lasts, so it is refused now,
  -- and a resent call leaves the queue, rather than waiting to be dropped at its head. When it was
  -- the head, the waiter behind it may fit: it is served now, not at some later call (I3).
  if ticket then
    redis.call('ZREM', QUEUE, ID)
    redis.call('ZREM', DEADLINES, ID)
    redis.call('HDEL', STATE, ID)
    WAITERS = WAITERS - 1
    regrant = true
  end
  OWN1, OWN2 = 0, 0
elseif ticket then
  setDeadline(ID, heartbeat)
  OWN1, OWN2 = 2, ticket + 0
else
  CREATED_QUEUE = WAITERS == 0
  redis.call('ZADD', QUEUE, nextSeq(), ID)
  if count > MOST then
    MOST = count
  end
  setDeadline(ID, heartbeat)
  NSETS = NSETS + 2
  SETS[NSETS - 1] = ID
  SETS[NSETS] = ARGV[3] .. ' ' .. ARGV[4] .. ' ' .. ARGV[7] .. ' 0 ' .. inbox .. ' ' .. owner
  WAITERS = WAITERS + 1
  OWN1, OWN2 = 2, SEQ
end
if regrant then
--@include _grant.lua
end
--@include _finish.lua
return R
