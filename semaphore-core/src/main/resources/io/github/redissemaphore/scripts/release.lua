-- release: gives a lease's permits back, all of them or all but some, and hands them to the head
-- of the queue.
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
--   (a semaphore with a rate: deadlines, state, queue, rate, and ARGV 1 "<permits> <rate-limit> <rate-period ms>"; _rate.lua)
-- ARGV 1, the limit: the caller's permits (TOTAL_TEXT); a capped semaphore's "<total-permits>
--   <permits> <key>" (TOTAL_TEXT, LIMIT_TEXT, KEY; see _names.lua)
-- ARGV: 1 limit, 2 permit id, 3 permits the lease keeps (optional; 0, the default: give all back),
--       4 inbox of the caller's JVM (optional: with it, only a lease this JVM owns is touched, so a
--       JVM whose lease another one adopted cannot release it; without it, any lease, by id),
--       5 hand over (optional, 0 or 1; 0, the default: as above): 1 releases any lease, whichever
--       JVM owns it, and tells the JVM that owned it, if not the caller's, on its inbox
--       "<id> -<server time us>", as an adoption does (see lease): it hears of a hand-over, not of
--       a lost lease. RedisSemaphore.release(id) is this one call, not an adoption and a release.
-- Returns: {used, waiters, time, earliest, limits, released, left}
--   released 1: the id held permits and now holds at most ARGV 3 (left: what it still holds, 0 when
--   it is gone); 0: it held nothing (released before, expired, a waiter, or never existed); -1:
--   another JVM owns it (ARGV 4 given, ARGV 5 not 1), nothing changed.
-- A part is given back as "keep at most k", not "give back n": a call a client library sends twice
-- after a reconnect gives back once, and two parts given back at once add up.
-- Keeps I1..I6: the count given back is the one recorded with the id; a part keeps its id, token
-- and deadline, and only its count goes down, with used.
-- Uncontended, it runs 5 commands (TIME, HMGET, ZREM, HDEL, HSET); a hand-off adds ZRANGE, HGET,
-- ZREM, ZADD and the PUBLISH per waiter served.
--@include _names.lua
local ID = ARGV[2] or ' '
--@include _read.lua
-- The caller's record, read once for both paths: its count, its token (0 while it waits) and the
-- inbox of the JVM that owns it.
local count, token, owns = string.match(S[7] or '', '^(%d+) %d+ %d+ (%d+) (%S+)')
-- The usual case, taken here with none of the general machinery: a holder's own JVM gives all of
-- it back, nobody waits, no override nor a limit another caller configured otherwise, nothing to
-- purge, and the keys' expiry need not move; a caller without a rate finds none another JVM left
-- (' rate': the general path reports the mismatch). It writes what the general path would write in this
-- case, and its reply says the same in a text that costs Redis no number printed and no table
-- (see Reply.java): "<used before> -<count> <' next'> <server time s> <its µs> 1 0". Anything
-- else goes on to the general path. A capped semaphore's key takes it too when it is usual
-- (KEY_USED, _read.lua), its reply starting as acquire.lua's does.
if S[2] and S[4] == '0' and S[6] == TOTAL_TEXT and KEY_USED and S[7] and ARGV[3] == '0' and ARGV[4]
    and not ARGV[5] and S[1] and S[3] and S[5] and (HEADS or RATE or not S[8] or S[8] == '-') then
  local next = S[5] + 0
  if token and token ~= '0' and owns == ARGV[4] and next > NOW_MS and NOW_MS + KEY_MIN_MARGIN_MS <= S[3] + 0 then
    local used = S[1] - count
    if used < 0 then
      used = 0
    end
    redis.call('ZREM', DEADLINES, ID)
    -- (Each reply one concatenation: a text built in parts costs a string per part.)
    if HEADS then
      -- (The key's field goes with its last permit: an idle key leaves nothing behind.)
      local left = KEY_USED - count
      if left > 0 then
        redis.call('HDEL', STATE, ID)
        redis.call('HSET', STATE, ' used', string.format('%d', used), ' k:' .. KEY, string.format('%d 0 - 0', left))
      else
        redis.call('HDEL', STATE, ID, ' k:' .. KEY)
        redis.call('HSET', STATE, ' used', string.format('%d', used))
      end
      return 'c ' .. S[1] .. ' ' .. TOTAL_TEXT .. ' ' .. LIMIT_TEXT .. ' ' .. KEY_USED .. ' -' .. count .. ' ' .. S[5]
          .. ' ' .. clock[1] .. ' ' .. clock[2] .. ' 1 0'
    end
    redis.call('HDEL', STATE, ID)
    redis.call('HSET', STATE, ' used', string.format('%d', used))
    return S[1] .. ' -' .. count .. ' ' .. S[5] .. ' ' .. clock[1] .. ' ' .. clock[2] .. ' 1 0'
  end
end
--@include _args.lua
--@include _load.lua
--@include _keys.lua
--@include _rate.lua
if not REC then
  argId(2)
end
local keep = (not ARGV[3] or ARGV[3] == '0') and 0 or argNumber(3, 0, 1000000)
local inbox = ARGV[4]
if inbox and inbox ~= owns then
  argId(4)
end
local handOver = ARGV[5] and argNumber(5, 0, 1) == 1
--@include _purge.lua
-- (Purging may have ended the lease: its record is then gone.)
if not REC then
  count, token, owns = nil, nil, nil
end
-- A waiter's record has token 0 (I2): only a holder's token is above.
OWN1, OWN2 = 0, 0
if token and token ~= '0' then
  if inbox and owns ~= inbox and not handOver then
    OWN1, OWN2 = -1, count + 0
  else
    if handOver and owns ~= inbox then
      publish(owns, ARGV[2] .. ' -' .. string.format('%.0f', NOW_US))
    end
    if keep == 0 then
      if WAITERS > 0 then
        -- Q3 (acquire.lua): the hold this release ends goes into the moving average that predicts
        -- waits, weight 1/8. Kept only while others wait, when a prediction is asked for: the usual
        -- case (nobody waits) pays nothing. The token is the server time of the grant, in us.
        local held = NOW_MS - (token - token % 1000) / 1000
        if held < 0 then
          held = 0
        end
        local hold = redis.call('HGET', STATE, ' hold')
        NSETS = NSETS + 2
        SETS[NSETS - 1] = ' hold'
        SETS[NSETS] = string.format('%d', hold and hold + (held - hold) / 8 or held)
      end
      redis.call('ZREM', DEADLINES, ID)
      if HEADS then
        DROPS[#DROPS + 1] = ID
      else
        redis.call('HDEL', STATE, ID)
      end
      USED = USED - count
      if USED < 0 then
        USED = 0
      end
      if HEADS then
        local ks = touch(KEY)
        ks.used = ks.used - count
      end
      OWN1 = 1
    else
      if keep < count + 0 then
        local _, lease, claim, _, _, owner = string.match(REC, '^(%d+) (%d+) (%d+) (%d+) (%S+) (.*)$')
        USED = USED - (count - keep)
        if HEADS then
          local ks = touch(KEY)
          ks.used = ks.used - (count - keep)
        end
        count = ARGV[3]
        NSETS = NSETS + 2
        SETS[NSETS - 1] = ID
        SETS[NSETS] = count .. ' ' .. lease .. ' ' .. claim .. ' ' .. token .. ' ' .. owns .. ' ' .. owner
      end
      OWN1, OWN2 = 1, count + 0
    end
  end
end
--@include _grant.lua
--@include _finish.lua
return R
