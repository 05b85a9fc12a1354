-- Shared part 4 (see _args.lua), the first that writes: a state started anew when it is gone.
-- A missing state key (never used, expired, or deleted by a hand outside the scripts), or one kept
-- past the expiry of the other keys by an override (I6): any deadline or queue entry left has no
-- record, and any record left has no deadline, so the semaphore starts anew (PEXPIREAT in the
-- past deletes a key), keeping the override, the runtime rate (R4) and the counter. The deadlines key gets its sentinel,
-- '' at +inf, which keeps it (and so its TTL) while nobody holds or waits: it goes with the state.
if not S[2] or (EXPIRES > 0 and EXPIRES <= NOW_MS) then
  -- The runtime limits of a capped semaphore's keys outlive it, as the cap's does (I6).
  local keyLimits = {}
  if HEADS and KEY_OVERRIDES > 0 then
    local all = redis.call('HGETALL', STATE)
    for i = 1, #all, 2 do
      local k = string.match(all[i], '^ k:(%S+)$')
      local override = k and string.match(all[i + 1], ' (%d+)$')
      if override and override ~= '0' then
        keyLimits[#keyLimits + 1] = { k, override + 0 }
      end
    end
  end
  redis.call('PEXPIREAT', DEADLINES, 1)
  redis.call('PEXPIREAT', QUEUE, 1)
  redis.call('PEXPIREAT', STATE, 1)
  if HEADS then
    redis.call('PEXPIREAT', HEADS, 1)
    redis.call('PEXPIREAT', READY, 1)
    S[8], S[9] = false, false
    KS, KLIST = {}, {}
    for _, kept in ipairs(keyLimits) do
      local ks = touch(kept[1])
      ks.override = kept[2]
    end
  end
  redis.call('ZADD', DEADLINES, '+inf', '')
  USED, WAITERS, EARLIEST, EXPIRES, REC, MOST = 0, 0, 0, 0, false, 0
  USED_READ, WAITERS_READ, EARLIEST_READ, SAVED_OVERRIDE, LIMITS = -1, -1, -1, nil, false
  -- (R4: the runtime rate outlives it too, written again by _finish.lua.)
  SAVED_RATE_OVERRIDE = nil
  SEQ = (SEQ_TEXT or 0) + 0
  SEQ_TEXT = false
end

-- Expired leases give their permits back; waiters whose JVM
-- stopped heartbeating leave the queue. Skipped while the earliest deadline (its lower bound in
-- the state) is in the future; once that has passed, the bound is read again (a renewal moved it).
-- (_keys.lua builds giveBack for this test: change both together.)
if EARLIEST > 0 and EARLIEST <= NOW_MS then
  local ids = redis.call('ZRANGEBYSCORE', DEADLINES, '-inf', NOW_MS, 'LIMIT', 0, PURGE_BATCH)
  if #ids > 0 then
    local recs = redis.call('HMGET', STATE, unpack(ids))
    redis.call('ZREM', DEADLINES, unpack(ids))
    redis.call('HDEL', STATE, unpack(ids))
    local waiters = {}
    for i = 1, #ids do
      local count, token = string.match(recs[i] or '', '^(%d+) %d+ %d+ (%d+) ')
      -- (A capped semaphore's member names its key: K1, K2.)
      local k, id = nil, nil
      if HEADS then
        k, id = splitMember(ids[i])
      end
      if token and token ~= '0' then
        giveBack(k, count)
      else
        waiters[#waiters + 1] = ids[i]
        local ticket = k and token and redis.call('ZSCORE', QUEUE, ids[i])
        if ticket then
          waiterLeft(k, id, ticket)
        end
      end
      if ids[i] == ID then
        REC = false
      end
    end
    if #waiters > 0 then
      WAITERS = WAITERS - redis.call('ZREM', QUEUE, unpack(waiters))
    end
  end
  local first = redis.call('ZRANGE', DEADLINES, 0, 0, 'WITHSCORES')
  -- (The sentinel '' at +inf, or nothing: no deadline.)
  EARLIEST = first[1] and first[1] ~= '' and first[2] + 0 or 0
  if EARLIEST == 0 then
    USED = 0
  elseif USED < 0 then
    -- I1 repair (a record changed by a hand outside the scripts): recounted from the records.
    local all = redis.call('ZRANGE', DEADLINES, 0, -1)
    USED = 0
    for i = 1, #all, 1000 do
      for _, rec in ipairs(redis.call('HMGET', STATE, unpack(all, i, math.min(i + 999, #all)))) do
        local count, token = string.match(rec or '', '^(%d+) %d+ %d+ (%d+) ')
        if token and token ~= '0' then
          USED = USED + count
        end
      end
    end
  end
end
