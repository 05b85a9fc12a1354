-- acquire: grants permits now, or puts the caller in the queue when it will wait.
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
--   (a semaphore with a rate: deadlines, state, queue, rate, and ARGV 1 "<permits> <rate-limit> <rate-period ms>"; _rate.lua)
-- ARGV 1, the limit: the caller's permits (TOTAL_TEXT); a capped semaphore's "<total-permits>
--   <permits> <key>" (TOTAL_TEXT, LIMIT_TEXT, KEY; see _names.lua)
-- ARGV: 1 limit, 2 permit id, 3 "<count> <lease ms> <waiter heartbeat ms>" (the heartbeat is also
--       the claim lease of a grant from the queue), 4 "<inbox channel of the caller's JVM> <owner
--       (host/pid/thread)>", 5 mode: 0 try once and take free permits regardless of waiters,
--       1 also queue when refused, 2 fair (refuse while others wait), 3 both, 4 over the limit: a
--       holder the instance granted on its own while Redis could not be reached, written back as
--       a holder whatever the limit (I7; never queued). (Packed, so a call
--       carries five arguments, the record is the caller's texts and one C call checks them all.)
--       6 optional, "<max waiters> <longest predicted wait ms>" (each 0: none): the queue's bound
--       (Q1) and the predicted wait past which a caller is refused rather than queued (Q2)
-- Returns: {used, waiters, time, earliest, limits, status, token, predicted, rate held}
--   status 1: granted, token = fencing token; 2: queued, token = ticket; 0: refused, token = 0
--   (also at once when count exceeds the limit of the call: an override below the request);
--   3: refused, the queue is full (Q1); 4: refused, its predicted wait is longer than ARGV 6 allows
--   (Q2); 5: refused, it did not wait and the permits let it in but the rate's window is full
--   (R1, _rate.lua), predicted = the ms until the window frees a slot. predicted (statuses 2..5
--   only): the wait predicted for a caller at the back of the queue, ms, -1 while no hold has been
--   measured (Q3); with a rate, at least the wait for its slot of the window. rate held (status 2
--   of a new waiter only, else absent): 1 when the rate's window, not the permits, held it back: the
--   permits let it in but no slot was free, or the head it queued behind fitted the permits and
--   waited for a slot (R3); a caller the rate delays, for its JVM's metrics.
-- Q1 a new waiter is queued only while fewer than max waiters wait (a capped semaphore: on its
--    key); a caller refused for it writes nothing of its own, and a waiter already queued (a call
--    sent again, a heartbeat) is never refused for it.
-- Q2 predicted = ceil(position x hold / limit): position in the queue (of its key), hold the moving
--    average of holds ended while others waited (' hold', see release.lua), limit the call's (of its
--    key). A FIFO queue with a direct hand-off serves its waiters at limit / hold per ms.
-- I7 (mode 4) USED may exceed the limit by the holders written back so: nothing more is granted
--    until enough of them are gone (every grant checks USED + count against the limit).
-- Q3 ' hold' is read only on the way into the queue: a call that does not queue reads nothing more.
-- Idempotent per id (a client library may send a command twice after a reconnect): an id that
-- holds already is answered granted with its token (its lease confirmed in full), an id that
-- waits already is answered queued with its ticket (its heartbeat refreshed). Keeps I1..I6.
-- Uncontended, it runs 4 commands (TIME, HMGET, ZADD, HSET), and a PEXPIREAT when the deadlines
-- key is new or a deadline reaches past the keys' expiry.
--@include _names.lua
local ID = ARGV[2] or ' '
--@include _read.lua
-- The arguments, each rule once: checked here, before anything is decided, and refused by the
-- general path below (after ARGV 1, which _load.lua checks), so that the usual case and the
-- general path accept exactly the same calls. (count <= the caller's limit is checked where the
-- limit is known.)
local count, lease, heartbeat = string.match(ARGV[3] or '', '^(%d+) (%d+) (%d+)$')
local given = count
if count then
  count, lease, heartbeat = count + 0, lease + 0, heartbeat + 0
end
-- (argId's rule, _args.lua, which is not built yet here; the general path calls argId itself.)
local idOk = ARGV[2] and ARGV[2] ~= '' and #ARGV[2] <= 200 and not string.find(ARGV[2], '%s')
local numbersOk = count and count >= 1 and lease >= 1 and lease <= 86400000 and heartbeat >= 1
    and heartbeat <= 86400000
-- "<inbox> <owner>": the inbox ends at the first space, 1..200 characters without whitespace.
local inboxOk = string.find(ARGV[4] or '', '^%S+ ') and string.find(ARGV[4], ' ', 1, true) <= 201
local mode = ARGV[5]
local modeOk = mode == '3' or mode == '2' or mode == '1' or mode == '0' or mode == '4'
local boundsOk = not ARGV[6] or string.find(ARGV[6], '^%d+ %d+$')

-- The usual case, taken here with none of the general machinery: good arguments, a new id,
-- nobody waiting, no override nor a limit another caller configured otherwise, room under the
-- limit, nothing to purge, and a deadline that neither ' next' nor the keys' expiry must move for;
-- no rate (its window is read and written on the general path only), nor one another JVM left
-- (' rate', a mismatch the general path reports).
-- It writes what the general path would write in this case, and its reply says the same in a
-- text that costs Redis no number printed and no table (see Reply.java): "<used before> <count>
-- <' next'> <server time s> <its µs> 1 <token>". Anything else goes on to the general path. A
-- capped semaphore's key takes it too when it is usual (KEY_USED, _read.lua) and fits its own
-- limit as well, and its reply starts with "c <cap's used before> <cap> <key limit>", the used
-- before being the key's.
if idOk and numbersOk and inboxOk and modeOk and boundsOk and S[2] and S[4] == '0' and S[6] == TOTAL_TEXT and KEY_USED
    and not S[7] and S[1] and S[3] and S[5] and not RATE and (HEADS or not S[8] or S[8] == '-') then
  local deadline = NOW_MS + lease
  local next = S[5] + 0
  if S[1] + count <= TOTAL_TEXT + 0 and next > NOW_MS and next <= deadline
      and deadline + KEY_MIN_MARGIN_MS <= S[3] + 0 and (not HEADS or KEY_USED + count <= LIMIT_TEXT + 0) then
    local seq = S[2] + 1
    if seq < NOW_US then
      seq = NOW_US
    end
    local token = string.format('%d', seq)
    redis.call('ZADD', DEADLINES, string.format('%d', deadline), ID)
    -- (Each reply one concatenation: a text built in parts costs a string per part.)
    if HEADS then
      redis.call('HSET', STATE, ID, ARGV[3] .. ' ' .. token .. ' ' .. ARGV[4], ' used',
          string.format('%d', S[1] + count), ' seq', token, ' k:' .. KEY, string.format('%d 0 - 0', KEY_USED + count))
      return 'c ' .. S[1] .. ' ' .. TOTAL_TEXT .. ' ' .. LIMIT_TEXT .. ' ' .. KEY_USED .. ' ' .. given .. ' ' .. S[5]
          .. ' ' .. clock[1] .. ' ' .. clock[2] .. ' 1 ' .. token
    end
    redis.call('HSET', STATE, ID, ARGV[3] .. ' ' .. token .. ' ' .. ARGV[4], ' used',
        string.format('%d', S[1] + count), ' seq', token)
    return S[1] .. ' ' .. given .. ' ' .. S[5] .. ' ' .. clock[1] .. ' ' .. clock[2] .. ' 1 ' .. token
  end
end
--@include _args.lua
--@include _load.lua
--@include _keys.lua
--@include _rate.lua
argId(2)
if HEADS and not KEY then
  error('semaphore script: ARGV[1] must name the key the permits are taken on, but was ' .. ARGV[1], 0)
end
if not numbersOk or count > (LIMIT_CONFIGURED or TOTAL_CONFIGURED) then
  error('semaphore script: ARGV[3] must be "<count> <lease ms> <heartbeat ms>", integers within 1..'
      .. (LIMIT_CONFIGURED or TOTAL_CONFIGURED) .. ', 1..86400000 and 1..86400000, but was ' .. tostring(ARGV[3]), 0)
end
if not inboxOk then
  error('semaphore script: ARGV[4] must be "<inbox> <owner>", the inbox an id of 1..200 characters without'
      .. ' whitespace, but was ' .. tostring(ARGV[4]), 0)
end
if not modeOk then
  error('semaphore script: ARGV[5] must be 0, 1, 2, 3 or 4, but was ' .. tostring(mode), 0)
end
if not boundsOk then
  error('semaphore script: ARGV[6] must be "<max waiters> <longest predicted wait ms>", two integers of'
      .. ' 0 or more, but was ' .. tostring(ARGV[6]), 0)
end
local wait, fair = mode == '3' or mode == '1', mode == '3' or mode == '2'
local maxWaiters, maxPredicted = string.match(ARGV[6] or '0 0', '^(%d+) (%d+)$')
maxWaiters, maxPredicted = maxWaiters + 0, maxPredicted + 0
--@include _purge.lua
--@include _grant.lua

local token = REC and string.match(REC, '^%d+ %d+ %d+ (%d+) ')
-- The ticket of a repeated call of a waiter (read only when its record says it waits).
local ticket = token == '0' and redis.call('ZSCORE', QUEUE, ID)
local regrant = false
-- A capped semaphore: the call's key, its limit, and whether the permits fit both levels. Fair, a
-- newcomer goes first only when its key has no waiter and no key waits for the cap (K5).
local ks = HEADS and keyState(KEY)
local keyLimit = ks and (ks.override > 0 and ks.override or LIMIT_CONFIGURED)
-- I7: a write-back (mode 4) fits whatever the limit, and takes no slot of the rate: it was granted
-- while neither could be checked.
local writeBack = mode == '4'
local fits = writeBack or USED + count <= TOTAL_LIMIT and not (ks and ks.used + count > keyLimit)
-- R1, R2: a caller the permits let in takes a slot of the rate too, or waits (or is refused) for one.
local free = not (token and token ~= '0') and not ticket and fits and (not fair or WAITERS == 0
    or (ks and ks.waiters == 0 and redis.call('ZCARD', READY) == 0))
local slotWait = free and not writeBack and rateWait() or 0
-- R3: the window, not the permits, held back this caller (slotWait) or the head it queues behind
-- (_grant.lua found the head fitting but no slot); told to a caller that queues (delayedByRate).
local rateHeld = RATE_WAIT ~= nil
if token and token ~= '0' then
  -- It holds already: a repeated call, or a grant from the queue it has not heard of yet. Its
  -- lease is confirmed in full.
  setDeadline(ID, string.match(REC, '^%d+ (%d+) '))
  OWN1, OWN2 = 1, token + 0
elseif free and slotWait == 0 then
  if not writeBack then
    rateTake()
  end
  setDeadline(ID, lease)
  NSETS = NSETS + 2
  SETS[NSETS - 1] = ID
  SETS[NSETS] = ARGV[3] .. ' ' .. nextSeq() .. ' ' .. ARGV[4]
  USED = USED + count
  if ks then
    touch(KEY).used = ks.used + count
  end
  OWN1, OWN2 = 1, SEQ
elseif not wait and slotWait > 0 then
  OWN1, OWN2, OWN3 = 5, 0, slotWait
elseif not wait then
  OWN1, OWN2 = 0, 0
elseif count > TOTAL_LIMIT or (ks and count > keyLimit) then
  -- An override below the request (I6): it cannot be served while that lasts, so it is refused now,
  -- and a resent call leaves the queue, rather than waiting to be dropped at its head. When it was
  -- the head, the waiter behind it may fit: it is served now, not at some later call (I3).
  if ticket then
    redis.call('ZREM', QUEUE, ID)
    redis.call('ZREM', DEADLINES, ID)
    redis.call('HDEL', STATE, ID)
    WAITERS = WAITERS - 1
    regrant = true
    if ks then
      waiterLeft(KEY, ARGV[2], ticket)
    end
  end
  OWN1, OWN2 = 0, 0
elseif ticket then
  setDeadline(ID, heartbeat)
  OWN1, OWN2 = 2, ticket + 0
else
  -- Q1..Q3: its place at the back, and the wait predicted there.
  local position = (ks and ks.waiters or WAITERS) + 1
  local hold = redis.call('HGET', STATE, ' hold')
  OWN3 = hold and math.ceil(position * hold / (ks and keyLimit or TOTAL_LIMIT)) or -1
  if RATE then
    -- (R1: the rate may be what holds it back the longest.)
    OWN3 = math.max(OWN3, rateAt(position))
  end
  if maxWaiters > 0 and position > maxWaiters then
    OWN1, OWN2 = 3, 0
  elseif maxPredicted > 0 and OWN3 > maxPredicted then
    OWN1, OWN2 = 4, 0
  end
end
if OWN1 == nil then
  CREATED_QUEUE = WAITERS == 0
  redis.call('ZADD', QUEUE, nextSeq(), ID)
  if ks then
    local entry = KEY .. ' ' .. SEQ_TEXT .. ' ' .. ARGV[2]
    redis.call('ZADD', HEADS, 0, entry)
    ks.waiters = ks.waiters + 1
    if ks.waiters == 1 then
      -- The key's head now: placed in ready from what is known. Behind others, nothing changes.
      local inbox, owner = string.match(ARGV[4], '^(%S+) (.*)$')
      joinedFirst(KEY, { entry, ID, ARGV[2], count, lease, heartbeat, inbox, owner, SEQ_TEXT })
    end
  end
  if count > MOST then
    MOST = count
  end
  setDeadline(ID, heartbeat)
  NSETS = NSETS + 2
  SETS[NSETS - 1] = ID
  SETS[NSETS] = ARGV[3] .. ' 0 ' .. ARGV[4]
  if ks then
    -- (Serving the keys reads it before the final HSET writes it.)
    GRANTED = GRANTED or {}
    GRANTED[ID] = SETS[NSETS]
  end
  WAITERS = WAITERS + 1
  OWN1, OWN2 = 2, SEQ
  -- (OWN3, the prediction, is always set on the way in, so the flag follows it in the reply.)
  if rateHeld then
    OWN4 = 1
  end
end
-- (A capped semaphore serves again once the caller joined the queue: it may be the one to serve.)
if regrant or (HEADS and OWN1 == 2) then
--@include _grant.lua
end
--@include _finish.lua
return R
