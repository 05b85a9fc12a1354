-- override: sets the runtime limit an operator chose for the semaphore, or clears it so that each
-- caller's configured limit applies again. Every call of every JVM follows it from then on (I6).
-- Lowering it takes no permit from a holder: nobody is granted until used + count fits the new
-- limit. Raising it (or clearing it above the current one) serves the queue at once, in ticket
-- order, here, with the grants published as a release publishes them.
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
--   (a semaphore with a rate: deadlines, state, queue, rate, and ARGV 1 "<permits> <rate-limit> <rate-period ms>"; _rate.lua)
-- ARGV 1, the limit: the caller's permits (TOTAL_TEXT); a capped semaphore's "<total-permits>
--   <permits> <key>" (TOTAL_TEXT, LIMIT_TEXT, KEY; see _names.lua)
-- ARGV: 1 limit, 2 the new limit (1..1,000,000), or 0 to clear it
-- Returns: {used, waiters, time, earliest, limits}: the figures under the new limit (limits names
--   the override, 0 once cleared); no entries of its own.
-- Keeps I1..I6: the state key loses its TTL when an override is set and gets it back when it is
--   cleared; a waiter that asks for more than the new limit is told it can never be served (token
--   0), as when a configured limit shrinks.
--@include _names.lua
--@include _args.lua
local override = argNumber(2, 0, 1000000)
local ID = NO_ID
--@include _read.lua
--@include _load.lua
--@include _keys.lua
--@include _rate.lua
-- I6: the state key keeps no TTL while an override is set. PERSIST comes before any write, so a
-- user whose ACL rule lacks it is refused with nothing changed (see _args.lua). On a state key
-- without a TTL, or none at all, it does nothing: the final HSET then creates it without one.
if override > 0 then
  redis.call('PERSIST', STATE)
end
--@include _purge.lua
if HEADS and KEY then
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
