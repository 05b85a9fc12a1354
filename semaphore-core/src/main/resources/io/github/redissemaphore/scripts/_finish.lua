-- Shared part 5 (see _args.lua): writes the counters back with the records of this call's grants
-- in one HSET, keeps every key's TTL past every deadline (I4), and fills in the reply's usage
-- figures. REFRESH (renew): set every key's TTL even when the horizon needs none, as a self-repair.
do
  if USED <= 0 and WAITERS <= 0 then
    -- Nobody holds or waits: no deadline is left (I2).
    USED, WAITERS, EARLIEST = 0, 0, 0
  end
  local n = #SETS
  SETS[n + 1], SETS[n + 2], SETS[n + 3], SETS[n + 4], SETS[n + 5], SETS[n + 6] =
      ' used', USED, ' waiters', WAITERS, ' next', EARLIEST
  n = n + 6
  if SEQ_CHANGED then
    SETS[n + 1], SETS[n + 2] = ' seq', SEQ
    n = n + 2
  end
  if LAST_LIMIT ~= CONFIGURED then
    SETS[n + 1], SETS[n + 2] = ' limit', CONFIGURED
    n = n + 2
  end
  -- I6: the state key has no TTL while an override is set, and gets it back when it is cleared.
  local stateTtl = false
  if OVERRIDE and OVERRIDE ~= SAVED_OVERRIDE then
    SETS[n + 1], SETS[n + 2] = ' override', OVERRIDE
    n = n + 2
  elseif SAVED_OVERRIDE and not OVERRIDE then
    redis.call('HDEL', STATE, ' override')
    stateTtl = true
  end
  -- The expiry only ever moves out: it covers deadlines of earlier calls too (I4).
  if REFRESH or EXPIRES == 0 or HORIZON + KEY_MIN_MARGIN_MS > EXPIRES then
    local at = HORIZON + (HORIZON - NOW_MS) + KEY_MARGIN_MS
    if at > EXPIRES then
      EXPIRES = at
    end
    SETS[n + 1], SETS[n + 2] = ' expires', EXPIRES
    redis.call('HSET', STATE, unpack(SETS))
    if not OVERRIDE then
      redis.call('PEXPIREAT', STATE, EXPIRES)
    end
    if USED > 0 or WAITERS > 0 or REFRESH then
      redis.call('PEXPIREAT', DEADLINES, EXPIRES)
    end
    if WAITERS > 0 or REFRESH then
      redis.call('PEXPIREAT', QUEUE, EXPIRES)
    end
  else
    redis.call('HSET', STATE, unpack(SETS))
    if stateTtl then
      redis.call('PEXPIREAT', STATE, EXPIRES)
    end
    if CREATED_DEADLINES then
      redis.call('PEXPIREAT', DEADLINES, EXPIRES)
    end
    if CREATED_QUEUE then
      redis.call('PEXPIREAT', QUEUE, EXPIRES)
    end
  end
  R[1], R[2], R[3], R[4], R[6], R[7] = USED, LIMIT, WAITERS, NOW_US, LAST_LIMIT or 0, OVERRIDE or 0
  R[5] = EARLIEST == 0 and -1 or (EARLIEST > NOW_MS and EARLIEST - NOW_MS or 0)
end
