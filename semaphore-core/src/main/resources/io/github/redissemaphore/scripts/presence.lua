-- presence: records that an instance uses a semaphore whose degraded mode takes its share from the
-- fleet (when-unavailable: local, no local-permits), and returns the instances seen, so each takes
-- its part of the permits by its rank among them while Redis cannot be reached. One call per
-- instance per semaphore and period (FleetShares.java); no other script reads or writes this key.
-- KEYS: 1 the instances: a sorted set of instance ids, each scored with the server time (ms) until
--       which it counts as seen; in the semaphore's slot
-- ARGV: 1 the caller's instance id (1..200 characters without whitespace), 2 how long it counts as
--       seen, ms (1..86400000)
-- Returns: {n, id 1, ..., id n}: the instances seen, the caller among them, in no set order
-- P1 an instance is returned only until its time has passed: a stopped one drops out by itself.
-- P2 the key expires ARGV 2 ms after the last call: a semaphore nobody uses leaves nothing.
--@include _names.lua
local id, seen = ARGV[1], tonumber(ARGV[2])
if not id or id == '' or #id > 200 or string.find(id, '%s') then
  error('semaphore script: ARGV[1] must be an instance id of 1..200 characters without whitespace, but was '
      .. tostring(id), 0)
end
if not seen or seen < 1 or seen > 86400000 or seen % 1 ~= 0 then
  error('semaphore script: ARGV[2] must be an integer within 1..86400000, but was ' .. tostring(ARGV[2]), 0)
end
local clock = redis.call('TIME')
local now = clock[1] * 1000 + math.floor(clock[2] / 1000)
-- (Only commands the least ACL of docs/operating.md allows: no ZREMRANGEBYSCORE, no PEXPIRE.)
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
end
redis.call('ZADD', KEYS[1], string.format('%d', now + seen), id)
redis.call('PEXPIREAT', KEYS[1], string.format('%d', now + seen))
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
table.insert(ids, 1, #ids)
return ids
