-- Shared part 1 of every semaphore script, included by the loader (Scripts.java) where a script
-- says --@include _args.lua. The parts are included as plain code, not as functions, so a call
-- defines no more than the three small functions below and two in _load.lua. (acquire and release
-- include _read.lua, part 2, before this one: their usual case is done before any function is
-- built; see _read.lua.) Every name the parts share is listed in _names.lua, part 0, which every
-- script includes first: what it holds, and which part declares and writes it.
--
-- KEYS (all with the hash tag {name}, so one cluster slot):
--   1 deadlines ZSET id -> deadline (server ms): the lease deadline of a holder, the heartbeat
--                    deadline of a waiter (its JVM died when it passes); and the sentinel '' at
--                    +inf, which keeps the key (and its TTL) while nobody holds or waits
--   2 state     HASH the semaphore's fields, each named with a leading space, which no id has:
--                      ' used' permits held, ' seq' the counter of tickets and fencing tokens,
--                      ' expires' server ms at which every key of the semaphore expires,
--                      ' waiters' the queue's size, ' next' a lower bound of the earliest
--                      deadline (0: none), ' limits' the configured limit of the last call, or
--                      "<that limit> <override> <most>" when an operator set a runtime limit
--                      (override, 0: none) or a waiter may ask for more than that limit (most:
--                      an upper bound of what waiters ask, so the head is read only then while
--                      no permit is free), ' hold' the moving average of holds (ms) that ended
--                      while others waited, which predicts waits (acquire.lua, Q2);
--                    and one field per holder and waiter, its id -> "count lease claim token inbox
--                      owner" (lease and claim in ms; token 0 while it waits; lease: of its
--                      acquisition, or of its latest extension; claim: the short lease a grant
--                      from the queue starts with; inbox: the JVM that waits for it, then the JVM
--                      that holds and renews it, which an adoption changes)
--                    One HMGET reads all a call needs, the caller's own record included, and one
--                    HSET writes it back.
--   3 queue     ZSET waiter id -> ticket (arrival order)
-- A capped semaphore has two keys more (4 heads, 5 ready), its ids stored as "<key> <id>", and
-- ARGV[1] "<total-permits> <permits> <key>": see _keys.lua, which keeps its two levels on top of
-- I1..I6. A semaphore with a rate has one key more (4 rate, a LIST of grant times) and ARGV[1]
-- "<permits> <rate-limit> <rate-period ms>": see _rate.lua, which keeps R1..R4 on top of I1..I6.
-- ARGV[1]: the limit (permits) the caller is configured with (TOTAL_TEXT; see _names.lua); the
-- rest is the script's own. The limit of the call (TOTAL_LIMIT) is the override when one is set,
-- else ARGV[1] (I6). A script checks its arguments before its first write; one that equals what
-- the state holds (the limit of the last call, the id of a record, the inbox of the caller's own
-- record) was checked when it was written, and is not checked again.
-- Every script returns a table that starts with used, waiters, the server time in microseconds
-- (so a client can tell the newest figures), the ms until the earliest deadline (-1: none; a
-- lower bound, so a client that waits can call again then; with a rate whose window is full while
-- others wait, at most the ms until it frees a slot, R3) and the limits: 0 in the usual case,
-- else the text "<configured limit of the previous call> <override>" (each 0 when none; a JVM
-- configured otherwise learns of the mismatch from it); then its own entries (see _finish.lua).
--
-- Invariants, true after every call whatever happened between calls:
--   I1 used = the sum of the counts of the holders (ids whose record has a token above 0);
--   I2 every holder and every waiter has its record and its deadline; no id is both a holder and
--      a waiter; every id in the queue is a waiter and every waiter is in the queue (a deadline
--      or a queue entry without a record, which only a hand outside the scripts can cause, is
--      dropped on sight and counts for nothing);
--   I3 a grant never takes used above the limit of the call that makes it, and waiters are granted
--      strictly in ticket order (nobody overtakes the head);
--   I4 every key has a TTL past every deadline it holds, so an idle semaphore leaves nothing behind,
--      except the state key while an override is set (I6);
--   I5 ' waiters' is the size of the queue, ' next' is at most the earliest deadline, and no
--      waiter asks for more than ' limits' says (renew re-derives the first two from the keys; a
--      missing state key starts the semaphore anew);
--   I6 while an override is set it is the limit of every call, whatever the caller is configured
--      with. Setting, lowering, raising or clearing it never takes a permit from a holder: after
--      a lowering used may stay above the limit until holders leave, and nobody is granted before
--      used + count fits, in ticket order; the call that changes it serves the queue under the new
--      limit at once. An operator's limit must not vanish because the semaphore was idle for a
--      few seconds, so the state key has no TTL while it is set (clearing it gives the TTL back);
--      its records are then trusted only until ' expires', when the other keys expire, and the
--      state is started anew (the override and the counter kept) after that.
-- Each script checks its arguments before its first write, and every write keeps I1..I6 for any
-- id a client can send (unknown, expired, released, granted or cancelled), so no script can fail
-- half-way (Redis does not roll back a script that errors). Nor on a permission error: the
-- README's Redis ACL rule grants exactly the commands these scripts and the client send (a test
-- reads them out of these files), and a publish, whose channel an ACL may refuse, goes through
-- redis.pcall: the write is done, the message lost, and the waiter learns at its next tick.
-- PERSIST, run by override alone when it sets the first runtime limit (I6), came later than the
-- other commands: it runs before the first write of its script, so a user whose rule lacks it is
-- refused with nothing changed.
-- Numbers: turning a Lua number into text costs a printf, the largest part of a lean script, so a
-- script keeps the text it read or was given wherever it can (a record is built from the ARGV
-- strings, a field is written only when it changed, the counter's text is made once per grant).
-- A Lua number handed to redis.call reaches Redis in full ("%.17g"); only a string built in Lua
-- (a record, a message) needs string.format('%.0f') for a token, whose 16 digits Lua's own
-- tostring would print in exponent form.


-- Argument checks, before any write: a bad value is an error reply, and nothing has changed. (A
-- plain string: Redis 6 cannot report an error table raised from a nested function.) A number
-- must be written in digits only, so that a script may store the argument's own text in a record.
-- (given: the text to check in place of ARGV[index], a part of it.)
local function argNumber(index, min, max, given)
  local text = given or ARGV[index]
  local value = text and string.find(text, '^%d+$') and text + 0
  if not value or value < min or value > max then
    error('semaphore script: ARGV[' .. index .. '] must be an integer between ' .. min .. ' and ' .. max
        .. ', but was ' .. tostring(text), 0)
  end
  return value
end

local function argId(index)
  local id = ARGV[index]
  if not id or #id == 0 or #id > 200 or string.find(id, '%s') then
    error('semaphore script: ARGV[' .. index .. '] must be an id of 1..200 characters without whitespace', 0)
  end
  return id
end

-- Hands a message to a JVM's inbox. A channel with a hash tag lives in this semaphore's slot: it
-- is a sharded channel (Redis Cluster 7+), and SPUBLISH keeps the message on this shard. One
-- without (standalone, Sentinel, Redis 6 clusters) gets PUBLISH. A refused channel loses the
-- message only (redis.pcall): the JVM finds out at its next tick.
local function publish(channel, message)
  if string.find(channel, '{', 1, true) then
    redis.pcall('SPUBLISH', channel, message)
  else
    redis.pcall('PUBLISH', channel, message)
  end
end

-- Bounds the work one call does on behalf of others, so no call is ever slow.
local PURGE_BATCH = 100
local GRANT_BATCH = 1000
-- The field the state read asks for when the script names no id: no record has it.
local NO_ID = ' '
