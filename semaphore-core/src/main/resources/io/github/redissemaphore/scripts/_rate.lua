-- Shared part 3c (see _args.lua): the rate, rate-limit grants per rate-period on top of the
-- permits, decided in the same call as the permits. Nothing is built or read here for a semaphore
-- without one (RATE false) but two small functions that answer at once. Its names are in section
-- 3c of _names.lua.
--
-- KEY 4 rate LIST: the server time (ms) of each grant of the window, oldest first, one entry per
--   grant whatever its count (a provider counts calls). An exact sliding window: a GCRA or token
--   bucket keeps one number but lets a burst of 2 x rate-limit through a window that straddles two
--   refills; this costs one entry per grant of the last rate-period (about 11 bytes each in a
--   listpack), bounded by rate-limit: a grant that finds rate-limit entries drops those that aged
--   out (LTRIM) before it pushes its own. Its TTL is rate-period past the newest grant, when every
--   entry has aged out: an idle semaphore leaves nothing behind (I4).
-- ARGV[1]: "<permits> <rate-limit 1..100000> <rate-period ms 100..86400000>" (RATE_TEXT its last two).
--
-- Invariants, on top of I1..I6:
--   R1 in every window [t, t + rate-period) of server time, at most rate-limit grants: a grant at
--      now needs the rate-limit-th newest entry to be at most now - rate-period (or fewer entries);
--   R2 a grant takes its permits and its slot in the same call, or neither; a waiter spends no slot;
--      nothing gives a slot back (release, expiry, a dead holder, a claim never confirmed): slots
--      only age out;
--   R3 the head of the queue waits for a slot only while none is free (then RATE_WAIT, the ms until
--      one frees, folds into the reply's earliest, so a JVM with waiters calls again at that moment;
--      a timer that fires twice for one slot grants once, as every grant is decided here);
--   R4 while a runtime rate is set (STATE field ' rover', "<rate-limit> <rate-period ms>", set and
--      cleared by override.lua only) it is the rate of every call of a semaphore with one, whatever
--      its caller is configured with: R1 holds with its figures from the call that set it on. The
--      window is the same list, so a lower limit or a shorter period holds at once, exactly (the list
--      keeps every grant of the last period, up to the previous limit); after a longer period or a
--      higher limit it counts the grants the list kept. Like the permits' override (I6) it keeps
--      the state key without a TTL while set, and outlives a state started anew (_purge.lua).
-- Mismatch: STATE field ' rate' holds the rate of the last call whose rate differed from what it
-- found ("<limit> <period ms>", '-' for a call without one; absent: none known). A call that finds
-- another rate there writes its own (_finish.lua) and tells its caller the one it found (RATE_SEEN),
-- so each JVM configured otherwise hears of the other; while they agree nothing is written.
-- (Uncapped only: a capped semaphore takes no rate.)
-- The mismatch compares configured rates only, and, as for the permits (I6), not while a runtime
-- rate (R4, S[9]) is set and both calls have a rate: every call with a rate follows it then. A call
-- without a rate follows none, so that mismatch is still told.
local RATE_SEEN = not HEADS and S[8] and S[8] ~= (RATE_TEXT or '-')
    and not (S[9] and RATE and S[8] ~= '-') and S[8] or nil
-- R4: the runtime rate as stored (nil: none), kept whether or not this call has a rate of its own,
-- so a call configured without one neither drops it nor lets the state key expire under it.
local RATE_OVERRIDE = not HEADS and S[9] or nil
local SAVED_RATE_OVERRIDE = RATE_OVERRIDE
local RATE_LIMIT, RATE_PERIOD, RATE_N, RATE_WAIT, RATE_TAKEN = 0, 0, nil, nil, 0
if RATE then
  local limit, period = string.match(RATE_TEXT, '^(%d+) (%d+)$')
  RATE_LIMIT, RATE_PERIOD = limit + 0, period + 0
  if RATE_LIMIT < 1 or RATE_LIMIT > 100000 or RATE_PERIOD < 100 or RATE_PERIOD > 86400000 then
    error('semaphore script: ARGV[1] must be "<limit> <rate limit> <rate period ms>", the rate limit within'
        .. ' 1..100000 and the period within 100..86400000, but was ' .. ARGV[1], 0)
  end
  -- (Checked by override.lua when it wrote it.)
  local overrideLimit, overridePeriod = string.match(RATE_OVERRIDE or '', '^(%d+) (%d+)$')
  if overrideLimit then
    RATE_LIMIT, RATE_PERIOD = overrideLimit + 0, overridePeriod + 0
  end
end

-- The ms until the window has a slot free (R1), 0 when it has one now; then the entries that aged
-- out are dropped, so the list keeps at most rate-limit entries. The list's length is read once.
local function rateWait()
  if not RATE then
    return 0
  end
  if not RATE_N then
    RATE_N = redis.call('LLEN', RATE)
  end
  if RATE_N < RATE_LIMIT then
    return 0
  end
  -- (0-based: the rate-limit-th newest entry, whose ageing out frees a slot.)
  local first = RATE_N - RATE_LIMIT
  local wait = redis.call('LINDEX', RATE, first) + RATE_PERIOD - NOW_MS
  if wait > 0 then
    RATE_WAIT = wait
    return wait
  end
  redis.call('LTRIM', RATE, first + 1, -1)
  RATE_N = RATE_LIMIT - 1
  return 0
end

-- A grant takes a slot (R2): after rateWait() said 0.
local function rateTake()
  if RATE then
    redis.call('RPUSH', RATE, string.format('%d', NOW_MS))
    RATE_N = RATE_N + 1
    RATE_TAKEN = RATE_TAKEN + 1
  end
end

-- The ms until the window lets the position-th grant from now through (a waiter at that place in
-- the queue), as far as the rate goes: each future grant takes the slot of the entry rate-limit
-- grants before it, rate-period later. For acquire's prediction (Q2).
local function rateAt(position)
  if rateWait() > 0 and position == 1 then
    return RATE_WAIT
  end
  local j = RATE_N - RATE_LIMIT + position - 1
  local laps = 0
  if j >= RATE_N then
    laps = math.floor((j - RATE_N) / RATE_LIMIT) + 1
    j = j - laps * RATE_LIMIT
  end
  local wait = j >= 0 and redis.call('LINDEX', RATE, j) + RATE_PERIOD - NOW_MS or 0
  if wait < 0 then
    wait = 0
  end
  return wait + laps * RATE_PERIOD
end

-- The window's use now, for state.lua: {grants in the last rate-period, ms until a slot frees (0:
-- one is free), the rate-limit and rate-period ms in force, 1 when they are a runtime rate (R4) else 0}. The list is oldest first, so the first entry still in the window is found by
-- halving (LINDEX), never by reading the whole list.
local function rateUse()
  local wait = rateWait()
  local low, high = 0, RATE_N
  while low < high do
    local mid = math.floor((low + high) / 2)
    if redis.call('LINDEX', RATE, mid) + RATE_PERIOD <= NOW_MS then
      low = mid + 1
    else
      high = mid
    end
  end
  return { RATE_N - low, wait, RATE_LIMIT, RATE_PERIOD, RATE_OVERRIDE and 1 or 0 }
end
