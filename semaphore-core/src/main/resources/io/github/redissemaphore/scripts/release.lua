-- release: gives a lease's permits back and hands them to the head of the queue.
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 permit id
-- Returns: {used, limit, waiters, time, released}; released 1 when the id held permits, else 0
--   (released before, expired, or never existed: nothing else changes)
purge()
local released = dropHolder(ARGV[2]) and 1 or 0
grantWaiters()
return finish({ released })
