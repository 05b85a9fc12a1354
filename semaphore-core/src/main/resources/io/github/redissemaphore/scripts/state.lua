-- state: the semaphore as Redis holds it, for introspection (after purging and granting, so it
-- shows what is true now).
-- KEYS: deadlines, state, queue (see _args.lua)
-- ARGV: 1 limit, 2 most entries listed per table
-- Returns: {used, waiters, time, earliest, limits, holders, queued}
--   holders: {{id, count, token, owner, lease remaining ms}, ...} soonest deadline first
--   queued:  {{id, count, owner}, ...} in the order they will be served
-- Keeps I1..I6; when it lists every holder it also recounts used (I1 self-check).
--@include _args.lua
local most = argNumber(2, 1, 100000)
local ID = NO_ID
--@include _read.lua
--@include _load.lua
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
local holders = {}
local entries = redis.call('ZRANGE', DEADLINES, 0, most + WAITERS - 1, 'WITHSCORES')
if #entries > 0 then
  local ids = {}
  for i = 1, #entries, 2 do
    if entries[i] ~= '' then
      ids[#ids + 1] = entries[i]
    end
  end
  local recs = records(ids)
  local sum = 0
  for i, id in ipairs(ids) do
    local count, token, owner = string.match(recs[i] or '', '^(%d+) %d+ %d+ (%d+) %S+ (.*)$')
    if token and token ~= '0' then
      sum = sum + count
      if #holders < most then
        holders[#holders + 1] = { id, count + 0, token + 0, owner, entries[2 * i] - NOW_MS }
      end
    end
  end
  if #ids < most + WAITERS then
    USED = sum
  end
end

local queued = {}
local waiting = redis.call('ZRANGE', QUEUE, 0, most - 1)
if #waiting > 0 then
  local recs = records(waiting)
  for i, id in ipairs(waiting) do
    local count, owner = string.match(recs[i] or '', '^(%d+) %d+ %d+ %d+ %S+ (.*)$')
    queued[#queued + 1] = { id, count and count + 0 or 0, owner or '' }
  end
end
OWN1, OWN2 = holders, queued
--@include _finish.lua
return R
