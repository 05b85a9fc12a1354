-- override: sets the runtime limit an operator chose for the semaphore, or clears it so that each
-- caller's configured limit applies again. Every call of every JVM follows it from then on (I6).
-- Lowering it takes no permit from a holder: nobody is granted until used + count fits the new
-- limit. Raising it (or clearing it above the current one) serves the queue at once, in ticket
-- order, here, with the grants published as a release publishes them.
-- The same for the rate of a semaphore with one (R4, _rate.lua): a runtime rate every call follows
-- whatever its caller's rate-limit and rate-period, or cleared so that each caller's applies again;
-- the queue is served under the new rate at once. It takes no slot and gives none back.
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
--   (a semaphore with a rate: deadlines, state, queue, rate, and ARGV 1 "<permits> <rate-limit> <rate-period ms>"; _rate.lua)
-- ARGV 1, the limit: the caller's permits (TOTAL_TEXT); a capped semaphore's "<total-permits>
--   <permits> <key>" (TOTAL_TEXT, LIMIT_TEXT, KEY; see _names.lua)
-- ARGV: 1 limit, 2 the new limit (1..1,000,000), or 0 to clear it; or, on a semaphore with a rate
--   only, "rate <rate-limit 1..100000> <rate-period ms 100..86400000>" to set the runtime rate, or
--   "rate 0" to clear it (the permits' override is then left as it is)
-- Returns: {used, waiters, time, earliest, limits}: the figures under the new limit (limits names
--   the override, 0 once cleared); no entries of its own.
-- Keeps I1..I6 and R1..R4: the state key loses its TTL when an override (or a runtime rate) is set
--   and gets it back when the last of them is cleared; a waiter that asks for more than the new
--   limit is told it can never be served (token 0), as when a configured limit shrinks. Every
--   argument is checked before the first write: a refused call changes nothing.
--@include _names.lua
--@include _args.lua
-- A runtime rate (R4): "rate <rate-limit> <rate-period ms>", or "rate 0" to clear it; rateLimit 0
-- then. Else the permits' override, a number.
local rateArg = ARGV[2] and string.match(ARGV[2], '^rate (.*)$')
local override, rateLimit, ratePeriod = 0, nil, nil
if rateArg == '0' then
  rateLimit = 0
elseif rateArg then
  rateLimit, ratePeriod = string.match(rateArg, '^(%d+) (%d+)$')
  rateLimit, ratePeriod = rateLimit and rateLimit + 0, ratePeriod and ratePeriod + 0
  if not rateLimit or rateLimit < 1 or rateLimit > 100000 or ratePeriod < 100 or ratePeriod > 86400000 then
    error('semaphore script: ARGV[2] must be "rate <rate limit> <rate period ms>", the rate limit within'
        .. ' 1..100000 and the period within 100..86400000, or "rate 0", but was ' .. ARGV[2], 0)
  end
else
  override = argNumber(2, 0, 1000000)
end
local ID = NO_ID
--@include _read.lua
--@include _load.lua
--@include _keys.lua
--@include _rate.lua
if rateLimit and not RATE then
  error('semaphore script: ARGV[2] sets a rate, but the call carries none: a runtime rate needs a semaphore'
      .. ' with a rate (four keys, ARGV[1] "<limit> <rate limit> <rate period ms>")', 0)
end
-- I6 (and R4): the state key keeps no TTL while an override is set. PERSIST comes before any write,
-- so a user whose ACL rule lacks it is refused with nothing changed (see _args.lua). On a state key
-- without a TTL, or none at all, it does nothing: the final HSET then creates it without one.
if override > 0 or (rateLimit and rateLimit > 0) then
  redis.call('PERSIST', STATE)
end
--@include _purge.lua
if rateLimit then
  -- R4: the rate of this call and every later one; cleared, the caller's configured rate.
  if rateLimit > 0 then
    RATE_OVERRIDE = string.format('%d %d', rateLimit, ratePeriod)
    RATE_LIMIT, RATE_PERIOD = rateLimit, ratePeriod
  else
    local limit, period = string.match(RATE_TEXT, '^(%d+) (%d+)$')
    RATE_OVERRIDE = nil
    RATE_LIMIT, RATE_PERIOD = limit + 0, period + 0
  end
elseif HEADS and KEY then
  -- The runtime limit of one key of a capped semaphore (see _keys.lua), counted in KEY_OVERRIDES.
  local ks = touch(KEY)
  if (ks.override > 0) ~= (override > 0) then
    KEY_OVERRIDES = KEY_OVERRIDES + (override > 0 and 1 or -1)
  end
  ks.override = override
elseif override > 0 then
  OVERRIDE = override
else
  OVERRIDE = nil
end
TOTAL_LIMIT = OVERRIDE or TOTAL_CONFIGURED
--@include _grant.lua
--@include _finish.lua
return R
