-- release: gives a lease's permits back and hands them to the head of the queue.
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 permit id
-- Returns: {used, limit, waiters, time, earliest, released}; released 1 when the id held permits,
--   else 0 (released before, expired, a waiter, or never existed: nothing else changes).
-- Keeps I1..I5: the count given back is the one recorded with the id, read before it is removed.
local id = argId(2)

purge()
local released = dropHolder(id, readInfo(id)) and 1 or 0
grantWaiters()
return finish({ released })
