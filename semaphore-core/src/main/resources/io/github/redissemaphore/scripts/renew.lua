-- renew: one call per semaphore per tick for everything one JVM has on it, and the JVM's
-- confirmation of the grants it heard of. Extends the leases of its held permits (a claim lease
-- becomes a full lease), refreshes the heartbeats of its waiters, and reports waiters granted
-- meanwhile (in case their inbox message was lost) and anything lost. Each lease is extended by
-- its own length (recorded with it: the lease of its acquisition, or of its latest extension).
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
--   (a semaphore with a rate: deadlines, state, queue, rate, and ARGV 1 "<permits> <rate-limit> <rate-period ms>"; _rate.lua)
-- ARGV 1, the limit: the caller's permits (TOTAL_TEXT); a capped semaphore's "<total-permits>
--   <permits> <key>" (TOTAL_TEXT, LIMIT_TEXT, KEY; see _names.lua)
-- ARGV: 1 limit, 2 waiter heartbeat ms, or "<heartbeat ms> <watermark us> <p>" for a sweep (below),
--       3 inbox of the caller's JVM, 4.. ids of permits to renew and of waiters, then p ids the
--       sweep must spare (neither renewed nor reported: leases this JVM holds but does not renew,
--       waiters whose queue entry it has not confirmed)
-- Returns: {used, waiters, time, earliest, limits, renewed, s1, s2, ..., l1, l2, ..., swept}:
--   renewed = leases extended; per renewed id in ARGV order, the fencing token when it holds
--   permits (now extended), 0 while it still waits, -1 when it is gone (lease expired, released by
--   force, wiped, or heartbeat missed), -2 when another JVM adopted it (not extended); then per id,
--   the lease ms it was extended by (0 when not extended); swept = the leases the sweep ended.
-- The sweep (a JVM sends a watermark after its connection was made anew: a failover, a restart):
--   S1 it ends every lease whose record names this JVM's inbox, whose id the call does not name
--      (renewed or spared), and whose fencing token is below min(watermark, server time - 1 s),
--      as a release would: its permits go back and serve the queue in the same call; it ends
--      nothing else (no waiter, no lease of another JVM, no named id, no newer lease).
--   S2 the JVM names every id it holds, waits with or is about to hold, but for the grants of
--      calls it starts after it took the list; its watermark is at most the server time of a
--      reply it had read before each call in flight started and before it took the list. A
--      call made after a reply runs after it, so a grant made after the list was taken has a
--      token (at least the server time in us of its grant) not below the watermark: a lease
--      granted after the list was taken is never ended. The 1 s margin keeps that true across
--      a failover to a server whose clock is up to 1 s behind, for a list taken less than 1 s
--      before the call runs. (An adoption keeps its old token: a JVM with one in flight sends
--      no watermark.)
--   So a JVM that gave a lease back on a server that then lost that write (a failover to a replica
--   that missed it, or that the JVM kept using after the promotion) has it ended by its first
--   renew on the new master, instead of blocking the permits until the lease runs out.
-- Keeps I1..I6, and repairs what a hand outside the scripts may have broken: it re-derives the
-- queue size and the earliest deadline from the keys, drops a waiter's record whose queue entry is
-- gone (its JVM joins again), and sets every key's TTL anew (a few reads and writes once per tick,
-- never on the hot path).
--@include _names.lua
--@include _args.lua
local heartbeat, WATERMARK, SPARED = nil, 0, 0
do
  local hb, watermark, spared = string.match(ARGV[2] or '', '^(%d+) (%d+) (%d+)$')
  if hb then
    heartbeat, WATERMARK, SPARED = hb + 0, watermark + 0, spared + 0
    if heartbeat < 1 or heartbeat > 86400000 or SPARED > #ARGV - 3 then
      error('semaphore script: ARGV[2] must be "<heartbeat ms 1..86400000> <watermark us> <spared ids, at most'
          .. ' the ids sent>", but was ' .. ARGV[2], 0)
    end
  else
    heartbeat = argNumber(2, 1, 86400000)
  end
end
local inbox = argId(3)
local ID = NO_ID
--@include _read.lua
--@include _load.lua
-- (Before _keys.lua, which builds giveBack for renew's sweep and purge, whatever the earliest deadline.)
REFRESH = true
--@include _keys.lua
--@include _rate.lua
-- I5: the queue size and the earliest deadline from the keys themselves.
WAITERS = redis.call('ZCARD', QUEUE)
do
  local first = redis.call('ZRANGE', DEADLINES, 0, 0, 'WITHSCORES')
  EARLIEST = first[1] and first[1] ~= '' and first[2] + 0 or 0
  if EARLIEST == 0 then
    USED = 0
  end
  -- I4: the keys' expiry must also cover deadlines other calls wrote; the last entry is the
  -- sentinel, put back if a hand outside the scripts took it (see _load.lua).
  local last = redis.call('ZRANGE', DEADLINES, -2, -1, 'WITHSCORES')
  if last[#last - 1] ~= '' then
    redis.call('ZADD', DEADLINES, '+inf', '')
  end
  if #last == 4 and last[1] ~= '' and last[2] + 0 > HORIZON then
    HORIZON = last[2] + 0
  end
end
--@include _purge.lua
-- The members of the ids: the ids themselves, or "<key> <id>" for a capped semaphore's key.
local members = ARGV
if KEY then
  members = {}
  for i = 4, #ARGV do
    members[i] = KEY .. ' ' .. ARGV[i]
  end
end
-- The sweep (S1, S2): before the queue is served, so the permits it frees are granted now.
local swept = 0
if WATERMARK > 0 then
  local below = math.min(WATERMARK, NOW_US - 1000000)
  local named = {}
  for i = 4, #ARGV do
    named[members[i]] = true
  end
  local prefix = KEY and KEY .. ' '
  local ends = {}
  local all = redis.call('HGETALL', STATE)
  for i = 1, #all, 2 do
    local member = all[i]
    if string.byte(member, 1) ~= 32 and not named[member]
        and (not prefix or string.sub(member, 1, #prefix) == prefix) then
      local count, token, owns = string.match(all[i + 1], '^(%d+) %d+ %d+ (%d+) (%S+) ')
      if owns == inbox and token ~= '0' and token + 0 < below then
        ends[#ends + 1] = member
        giveBack(KEY, count)
      end
    end
  end
  for from = 1, #ends, 1000 do
    local to = math.min(from + 999, #ends)
    redis.call('ZREM', DEADLINES, unpack(ends, from, to))
    redis.call('HDEL', STATE, unpack(ends, from, to))
  end
  swept = #ends
end
--@include _grant.lua

local n = #ARGV - 3 - SPARED
local renewed, statuses, leases = 0, {}, {}
-- The records of the ids, read in chunks of 1000 (a Lua call takes a few thousand arguments at most).
for from = 1, n, 1000 do
  local to = math.min(from + 999, n)
  local recs = redis.call('HMGET', STATE, unpack(members, from + 3, to + 3))
  for i = from, to do
    local id = members[i + 3]
    local status, extended = -1, 0
    local _, lease, _, token, owns = string.match(GRANTED and GRANTED[id] or recs[i - from + 1] or '',
        '^(%d+) (%d+) (%d+) (%d+) (%S+) ')
    if token and token ~= '0' then
      if owns ~= inbox then
        status = -2
      else
        setDeadline(id, lease)
        renewed = renewed + 1
        status, extended = token + 0, lease + 0
      end
    elseif token then
      if redis.call('ZSCORE', QUEUE, id) then
        setDeadline(id, heartbeat)
        status = 0
      else
        -- Its queue entry is gone (a hand outside the scripts): so is the rest; its JVM joins again.
        redis.call('ZREM', DEADLINES, id)
        redis.call('HDEL', STATE, id)
      end
    end
    statuses[i] = status
    leases[i] = extended
  end
end
OWN1 = renewed
--@include _finish.lua
for i = 1, n do
  R[6 + i] = statuses[i]
  R[6 + n + i] = leases[i]
end
R[7 + 2 * n] = swept
return R
