-- state: the semaphore as Redis holds it, for introspection (after purging and granting, so it
-- shows what is true now).
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
--   (a semaphore with a rate: deadlines, state, queue, rate, and ARGV 1 "<permits> <rate-limit> <rate-period ms>"; _rate.lua)
-- ARGV 1, the limit: the caller's permits (TOTAL_TEXT); a capped semaphore's "<total-permits>
--   <permits> <key>" (TOTAL_TEXT, LIMIT_TEXT, KEY; see _names.lua)
-- ARGV: 1 limit, 2 most entries listed per table
-- Returns: {used, waiters, time, earliest, limits, holders, queued, hold, window}
--   holders: {{id, count, token, owner, lease remaining ms}, ...} soonest deadline first
--   queued:  {{id, count, owner}, ...} in the order they will be served
--   hold:    the average hold that predicts waits (' hold', acquire.lua's Q2), ms; -1: none yet
--   window:  with a rate only, {grants in the last rate-period, ms until the window frees a slot
--            (0: one is free), the rate-limit and rate-period ms in force, 1 when they are a
--            runtime rate (R4) else 0} (_rate.lua)
--   A capped semaphore's entries end with their key: about one key, its own holders and waiters
--   (in the order they will be served); about the cap, every key's, the waiters in arrival order.
-- Keeps I1..I6; when it lists every holder it also recounts used (I1 self-check).
--@include _names.lua
--@include _args.lua
local most = argNumber(2, 1, 100000)
local ID = NO_ID
--@include _read.lua
--@include _load.lua
--@include _keys.lua
--@include _rate.lua
--@include _purge.lua
--@include _grant.lua

-- The records of ids, read in chunks of 1000 (a Lua call takes a few thousand arguments at most),
-- with the grants of this call, which the final HSET has not written yet.
local function records(ids)
  local recs = {}
  for from = 1, #ids, 1000 do
    local to = math.min(from + 999, #ids)
    local chunk = redis.call('HMGET', STATE, unpack(ids, from, to))
    for i = from, to do
      recs[i] = GRANTED and GRANTED[ids[i]] or chunk[i - from + 1]
    end
  end
  return recs
end

-- Holders, soonest deadline first: the deadlines key holds the waiters' heartbeats too, so as
-- many more entries are read as there are waiters.
-- (A capped semaphore's deadlines are read whole: the cap bounds its holders, and a key's may be
-- anywhere among the other keys'.)
local holders = {}
local entries = redis.call('ZRANGE', DEADLINES, 0, HEADS and -1 or most + WAITERS - 1, 'WITHSCORES')
if #entries > 0 then
  local ids, deadlines = {}, {}
  for i = 1, #entries, 2 do
    if entries[i] ~= '' then
      ids[#ids + 1] = entries[i]
      deadlines[#ids] = entries[i + 1]
    end
  end
  local recs = records(ids)
  local sum = 0
  for i, id in ipairs(ids) do
    local count, token, owner = string.match(recs[i] or '', '^(%d+) %d+ %d+ (%d+) %S+ (.*)$')
    if token and token ~= '0' then
      sum = sum + count
      local k, plain = nil, id
      if HEADS then
        k, plain = splitMember(id)
      end
      if #holders < most and (not KEY or k == KEY) then
        holders[#holders + 1] = { plain, count + 0, token + 0, owner, deadlines[i] - NOW_MS, k }
      end
    end
  end
  if HEADS or #ids < most + WAITERS then
    USED = sum
  end
end

local queued = {}
local waiting
if KEY then
  -- One key's waiters, in the order it serves them: "<key> <ticket> <id>" to members.
  waiting = redis.call('ZRANGEBYLEX', HEADS, '[' .. KEY .. ' ', '(' .. KEY .. '!', 'LIMIT', 0, most)
  for i, entry in ipairs(waiting) do
    waiting[i] = KEY .. ' ' .. string.match(entry, '(%S+)$')
  end
else
  waiting = redis.call('ZRANGE', QUEUE, 0, most - 1)
end
if #waiting > 0 then
  local recs = records(waiting)
  for i, id in ipairs(waiting) do
    local count, owner = string.match(recs[i] or '', '^(%d+) %d+ %d+ %d+ %S+ (.*)$')
    local k, plain = nil, id
    if HEADS then
      k, plain = splitMember(id)
    end
    queued[#queued + 1] = { plain, count and count + 0 or 0, owner or '', k }
  end
end
OWN1, OWN2, OWN3 = holders, queued, tonumber(redis.call('HGET', STATE, ' hold')) or -1
-- (R1: the window's use, of a semaphore with a rate.)
if RATE then
  OWN4 = rateUse()
end
--@include _finish.lua
return R
