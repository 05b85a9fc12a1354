-- Shared part 6 (see _args.lua): writes what changed back in one HSET, with the records of this
-- call's grants, keeps every key's TTL past every deadline (I4), and makes the reply, R. REFRESH
-- (renew): set every key's TTL even when the horizon needs none, as a self-repair.
-- ' next' stays a lower bound when the deadline it was goes (a release): purging reads it again
-- once it has passed, so no call writes it only to raise it. Numbers are written as '%d' texts
-- (an integer printf; Redis would print a Lua number through the far dearer '%.17g').
do
  if USED < 0 then
    USED = 0
  end
  local n = NSETS
  if HEADS then
    -- The counters of the keys this call changed (K1..K3): a key that holds nothing, has no waiter
    -- and no runtime limit leaves no field behind.
    local gone = DROPS
    for _, k in ipairs(KLIST) do
      local ks = KS[k]
      if ks.dirty then
        refreshKey(k)
      end
      if ks.used < 0 then
        ks.used = 0
      end
      if ks.used == 0 and ks.waiters <= 0 and ks.override == 0 then
        if ks.text then
          gone[#gone + 1] = ' k:' .. k
        end
      else
        local text = string.format('%d %d %s %d', ks.used, ks.waiters, ks.ready or '-', ks.override)
        if text ~= ks.text then
          SETS[n + 1], SETS[n + 2] = ' k:' .. k, text
          n = n + 2
        end
      end
    end
    if #gone > 0 then
      redis.call('HDEL', STATE, unpack(gone))
    end
    -- The key limit of this call, which the next caller compares with its own (limit mismatch).
    if S[9] ~= LIMIT_TEXT then
      SETS[n + 1], SETS[n + 2] = ' each', LIMIT_TEXT
      n = n + 2
    end
  end
  if USED ~= USED_READ then
    SETS[n + 1], SETS[n + 2] = ' used', string.format('%d', USED)
    n = n + 2
  end
  if WAITERS ~= WAITERS_READ then
    SETS[n + 1], SETS[n + 2] = ' waiters', string.format('%d', WAITERS)
    n = n + 2
  end
  if EARLIEST ~= EARLIEST_READ then
    SETS[n + 1], SETS[n + 2] = ' next', string.format('%d', EARLIEST)
    n = n + 2
  end
  if not SEQ_TEXT then
    -- A state started anew: the counter goes on from where it was.
    SEQ_TEXT = string.format('%d', SEQ)
  end
  if SEQ_TEXT ~= S[2] then
    SETS[n + 1], SETS[n + 2] = ' seq', SEQ_TEXT
    n = n + 2
  end
  -- I6: the state key has no TTL while an override is set, and gets it back when it is cleared.
  if WAITERS == 0 then
    MOST = 0
  end
  local limits = KEY_OVERRIDES > 0
      and string.format('%d %d %d %d', TOTAL_CONFIGURED, OVERRIDE or 0, MOST, KEY_OVERRIDES)
      or (OVERRIDE or MOST > TOTAL_CONFIGURED) and string.format('%d %d %d', TOTAL_CONFIGURED, OVERRIDE or 0, MOST)
      or TOTAL_TEXT
  if limits ~= LIMITS then
    SETS[n + 1], SETS[n + 2] = ' limits', limits
    n = n + 2
  end
  -- The rate of this call, when it differs from the one the last call left (_rate.lua's RATE_SEEN);
  -- a call without a rate writes '-' only over a rate, so semaphores that never had one write nothing.
  if RATE_SEEN or (RATE and not S[8]) then
    SETS[n + 1], SETS[n + 2] = ' rate', RATE_TEXT or '-'
    n = n + 2
  end
  -- The runtime rate (R4, _rate.lua), when this call set, cleared or started the state anew under it.
  if RATE_OVERRIDE ~= SAVED_RATE_OVERRIDE then
    if RATE_OVERRIDE then
      SETS[n + 1], SETS[n + 2] = ' rover', RATE_OVERRIDE
      n = n + 2
    else
      redis.call('HDEL', STATE, ' rover')
    end
  end
  -- (Runtime limits of keys, and a runtime rate, keep the state key as the cap's override does.)
  local kept = OVERRIDE or KEY_OVERRIDES > 0 or RATE_OVERRIDE
  local stateTtl = (SAVED_OVERRIDE or SAVED_KEY_OVERRIDES > 0 or SAVED_RATE_OVERRIDE) and not kept
  if REFRESH or EXPIRES == 0 or HORIZON + KEY_MIN_MARGIN_MS > EXPIRES then
    -- The expiry only ever moves out: it covers deadlines of earlier calls too (I4).
    local at = HORIZON + (HORIZON - NOW_MS) + KEY_MARGIN_MS
    if at > EXPIRES then
      EXPIRES = at
    end
    local text = string.format('%d', EXPIRES)
    SETS[n + 1], SETS[n + 2] = ' expires', text
    redis.call('HSET', STATE, unpack(SETS, 1, n + 2))
    if not kept then
      redis.call('PEXPIREAT', STATE, text)
    end
    redis.call('PEXPIREAT', DEADLINES, text)
    if WAITERS > 0 or REFRESH then
      redis.call('PEXPIREAT', QUEUE, text)
      if HEADS then
        redis.call('PEXPIREAT', HEADS, text)
        redis.call('PEXPIREAT', READY, text)
      end
    end
  else
    if n > 0 then
      redis.call('HSET', STATE, unpack(SETS, 1, n))
    end
    if stateTtl then
      redis.call('PEXPIREAT', STATE, string.format('%d', EXPIRES))
    end
    if CREATED_QUEUE then
      redis.call('PEXPIREAT', QUEUE, string.format('%d', EXPIRES))
      if HEADS then
        redis.call('PEXPIREAT', HEADS, string.format('%d', EXPIRES))
      end
    end
    if READY_WRITTEN then
      redis.call('PEXPIREAT', READY, string.format('%d', EXPIRES))
    end
  end
end
-- The rate (R3, _rate.lua): while others wait and the window is full, the ms until it frees a slot
-- folds into the earliest moment the reply names, so a JVM with waiters calls again then; the
-- window's TTL covers its newest grant.
local rateWaitMs = WAITERS > 0 and rateWait() or 0
if RATE_TAKEN > 0 then
  redis.call('PEXPIREAT', RATE, string.format('%d', NOW_MS + RATE_PERIOD))
end
-- The reply: {used, waiters, server time us, ms until the earliest deadline (-1: none), limits,
-- the script's own entries}. Limits is 0 in the usual case (no override, and the previous call
-- was configured as this one), else the text "<configured limit of the previous call> <override>"
-- (each 0 when none), from which the caller learns of a mismatch or of the runtime limit. Built
-- in one go: the table ends at the first own entry the script left nil.
local R = { USED, WAITERS, NOW_US, EARLIEST == 0 and -1 or (EARLIEST > NOW_MS and EARLIEST - NOW_MS or 0),
            (OVERRIDE or LAST_TOTAL ~= TOTAL_TEXT)
                and (LAST_TOTAL or '0') .. ' ' .. (OVERRIDE and string.format('%d', OVERRIDE) or '0') or 0,
            OWN1, OWN2, OWN3, OWN4 }
if rateWaitMs > 0 and (R[4] < 0 or rateWaitMs < R[4]) then
  R[4] = rateWaitMs
end
-- A rate mismatch: the limits text carries the rate the last call had, "<limit>/<period ms>" or '-'.
if RATE_SEEN then
  R[5] = (R[5] == 0 and (LAST_TOTAL or '0') .. ' 0' or R[5]) .. ' ' .. string.gsub(RATE_SEEN, ' ', '/')
end
-- A capped semaphore's call about one key answers that key's used and waiters, and always the
-- limits as "<configured cap of the previous call> <cap override> <cap used> <cap waiters> <the
-- key's runtime limit> <the cap of the call> <configured key limit of the previous call>" (each 0
-- when none).
if HEADS then
  local ks = KEY and keyState(KEY)
  R[5] = string.format('%s %d %d %d %d %d %s', LAST_TOTAL or '0', OVERRIDE or 0, USED, WAITERS,
      ks and ks.override or 0, TOTAL_LIMIT, S[9] or '0')
  if ks then
    R[1], R[2] = ks.used, ks.waiters
  end
end
