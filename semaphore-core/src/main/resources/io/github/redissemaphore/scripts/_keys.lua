-- Shared part 3b (see _args.lua): the keys of a capped semaphore, which share one cap. Nothing is
-- built here for a semaphore without one (HEADS nil) but giveBack, which every semaphore's purge
-- and sweep use, and only when they may run, so it costs those nothing but a test or two. Its
-- names, and the other capped-only ones, are section 3 of _names.lua (giveBack is in section 2).
--
-- A capped semaphore ("exports", total-permits T) keeps all its keys ("exports:acme", each up to
-- its permits, LIMIT_CONFIGURED) in one set of Redis keys, so one script call takes a key's permits and the
-- cap's together, or neither (its keys carry the hash tag {exports}: one cluster slot, one shard).
-- KEYS: 1 deadlines, 2 state, 3 queue as for any semaphore, with every id stored as the member
--         "<key> <id>"; the state's counters (' used', ' waiters', ...) are the cap's;
--       4 heads ZSET, every score 0, members "<key> <ticket> <id>": each key's waiters in arrival
--         order, so ZRANGEBYLEX finds a key's head (a ticket always has 16 digits, see _load.lua);
--       5 ready ZSET, one member "<ticket of its head> <key>" per key whose head fits that key's
--         own limit (so it waits for the cap only), scored by the permits the key holds: the first
--         entry is the key that holds the fewest, ties broken by the earliest arrival.
-- STATE field ' k:<key>': "<used> <waiters> <ticket>.<id> of its head while in ready, or -> <runtime
--   limit, 0: none>",
--   absent while the key holds nothing, has no waiter and no runtime limit (an idle key leaves
--   nothing behind). STATE field ' each': the key limit of the previous call, so a JVM configured
--   with other permits per key learns of the mismatch, as ' limits' tells it of the cap's.
-- ARGV[1]: "<cap limit> <key limit> <key>"; without the key, a call about the cap as a whole.
--
-- Invariants of the two levels, on top of I1..I6 (which hold for the cap):
--   K1 a key's used = the sum of its holders' counts, and ' used' = the sum over keys;
--   K2 a key's waiters = its entries in heads = its members in the queue;
--   K3 a key is in ready iff its head fits its own limit (used + count <= its limit), scored by its
--      used, with its head's ticket;
--   K4 after every call, no key in ready fits the cap: the cap is full for the first entry in ready
--      (serve grants until then), so every waiter that could run under both limits is running;
--   K5 within a key waiters are granted in ticket order; across keys the cap goes to the first entry
--      of ready, the key holding the fewest (ties: the earliest head), and nobody is granted past
--      an entry that does not fit the cap (no overtaking at the cap); a key that is full blocks
--      no other key, as it is not in ready.
local KS, KLIST = nil, nil
-- Records this call removes, deleted with the fields of keys gone idle in one HDEL (_finish.lua).
local DROPS = nil
local keyState, touch, refreshKey, serveKeys, joinedFirst = nil, nil, nil, nil, nil
local waiterLeft, splitMember = nil, nil
-- Whether this call wrote to ready (a zset that empties is deleted, so one written anew needs its TTL).
local READY_WRITTEN = false
-- giveBack(k, count): gives back count permits a holder of key k held, at both levels (I1, K1):
-- the total's, then the key's (k nil or false: a semaphore without a cap, which has only the
-- total). The holder's deadline and record are the caller's to remove. Its callers are _purge.lua's
-- purge of expired holders and renew's sweep; it is built only for a call that may reach them
-- (renew, or one whose purge runs: its test, the earliest deadline passed), as a function built
-- costs every call that builds it (about 1 % of a contended pair, measured).
local giveBack = nil
if REFRESH or (EARLIEST > 0 and EARLIEST <= NOW_MS) then
  giveBack = function(k, count)
    USED = USED - count
    if k then
      local ks = touch(k)
      ks.used = ks.used - count
    end
  end
end
if HEADS then
  KS, KLIST, DROPS = {}, {}, {}
  -- The counters of key k, read once per call (the call's own key came with the state read).
  keyState = function(k)
    local ks = KS[k]
    if not ks then
      local text
      if k == KEY then
        text = S[8]
      else
        text = redis.call('HGET', STATE, ' k:' .. k)
      end
      local used, waiters, ready, override = string.match(text or '', '^(%d+) (%d+) (%S+) (%d+)$')
      ks = { used = (used or 0) + 0, waiters = (waiters or 0) + 0, ready = ready ~= '-' and ready or false,
             override = (override or 0) + 0, text = text or false, dirty = false, head = nil }
      ks.score = ks.used
      KS[k] = ks
      KLIST[#KLIST + 1] = k
    end
    return ks
  end

  -- Marks key k's head as to be read again (its counters or its queue changed).
  touch = function(k)
    local ks = keyState(k)
    ks.dirty, ks.head = true, nil
    return ks
  end

  -- A member "<key> <id>" as its key and its id.
  splitMember = function(member)
    return string.match(member, '^(%S+) (%S+)$')
  end

  -- Waiter id of key k, its queue ticket given, leaves heads and its key's count (K2); its queue
  -- entry, deadline and record are the caller's to remove.
  waiterLeft = function(k, id, ticket)
    redis.call('ZREM', HEADS, k .. ' ' .. string.format('%d', ticket) .. ' ' .. id)
    local ks = touch(k)
    ks.waiters = ks.waiters - 1
  end

  -- The limit of key k: its runtime limit, else the caller's.
  local function limitOf(ks)
    return ks.override > 0 and ks.override or LIMIT_CONFIGURED
  end

  -- Key k's first waiter (ticket, id), read from its record: the head as a grant needs it, or
  -- false when it can never be served (it asks for more than the key's or the cap's limit, after
  -- a runtime limit lowered one, or its record is gone): it then leaves the queue here and is told
  -- so (token 0), as _grant.lua does.
  local function headOf(k, ks, ticket, id)
    local entry, member = k .. ' ' .. ticket .. ' ' .. id, k .. ' ' .. id
    local count, lease, claim, token, inbox, owner = string.match(
        GRANTED and GRANTED[member] or redis.call('HGET', STATE, member) or '', '^(%d+) (%d+) (%d+) (%d+) (%S+) (.*)$')
    if count and token == '0' and count + 0 <= limitOf(ks) and count + 0 <= TOTAL_LIMIT then
      return { entry, member, id, count + 0, lease, claim, inbox, owner, ticket }
    end
    redis.call('ZREM', HEADS, entry)
    WAITERS = WAITERS - redis.call('ZREM', QUEUE, member)
    ks.waiters = ks.waiters - 1
    if count and token == '0' then
      redis.call('ZREM', DEADLINES, member)
      redis.call('HDEL', STATE, member)
      publish(inbox, id .. ' 0')
      if member == ID then
        REC = false
      end
    end
    return false
  end

  -- K3: key k in ready, scored by its used, while its head fits its own limit; else out of it. Its
  -- field keeps "<ticket>.<id>" of the head it is in ready with, so serving it needs no search.
  local function place(k, ks, head)
    local ready = head and ks.used + head[4] <= limitOf(ks) and head[9] .. '.' .. head[3]
    if ks.ready and ks.ready ~= ready then
      redis.call('ZREM', READY, string.match(ks.ready, '^%d+') .. ' ' .. k)
    end
    if ready and (ready ~= ks.ready or ks.score ~= ks.used) then
      redis.call('ZADD', READY, ks.used, head[9] .. ' ' .. k)
      READY_WRITTEN = true
    end
    ks.ready, ks.score, ks.head, ks.dirty = ready, ks.used, ready and head, false
  end

  -- Reads key k's head from heads and places k (K3).
  refreshKey = function(k)
    local ks = keyState(k)
    local head = false
    while ks.waiters > 0 and not head do
      local entry = redis.call('ZRANGEBYLEX', HEADS, '[' .. k .. ' ', '(' .. k .. '!', 'LIMIT', 0, 1)[1]
      if not entry then
        ks.waiters = 0
        break
      end
      local ticket, id = string.match(entry, ' (%d+) (%S+)$')
      head = headOf(k, ks, ticket, id)
    end
    place(k, ks, head)
  end

  -- A newcomer that is its key's first waiter: placed from what the call knows, with no read.
  joinedFirst = function(k, head)
    place(k, keyState(k), head)
  end

  -- K4, K5: refreshes the keys this call changed, then grants the cap to the first entry of ready
  -- while it fits, each grant as _grant.lua makes one (claim lease, token, message to its JVM).
  serveKeys = function()
    for i = 1, #KLIST do
      if KS[KLIST[i]].dirty then
        refreshKey(KLIST[i])
      end
    end
    -- (No waiter, no key in ready: nothing to read.)
    local batch = GRANT_BATCH
    while batch > 0 and USED < TOTAL_LIMIT and WAITERS > 0 do
      batch = batch - 1
      local top = redis.call('ZRANGE', READY, 0, 0)[1]
      if not top then
        break
      end
      local k = string.match(top, '^%d+ (%S+)$')
      local ks = keyState(k)
      if ks.head == nil then
        -- Its head is the one its field names (K3), read without a search, unless the call
        -- changed the key; one that can never be served is dropped, and the key read anew.
        local ticket, id = string.match(ks.ready or '', '^(%d+)%.(%S+)$')
        local head = ticket and not ks.dirty and headOf(k, ks, ticket, id)
        if head then
          place(k, ks, head)
        else
          refreshKey(k)
        end
      end
      local h = ks.head
      if h then
        if USED + h[4] > TOTAL_LIMIT then
          break
        end
        redis.call('ZREM', HEADS, h[1])
        redis.call('ZREM', QUEUE, h[2])
        setDeadline(h[2], h[6])
        local rec = h[4] .. ' ' .. h[5] .. ' ' .. h[6] .. ' ' .. nextSeq() .. ' ' .. h[7] .. ' ' .. h[8]
        NSETS = NSETS + 2
        SETS[NSETS - 1], SETS[NSETS] = h[2], rec
        GRANTED = GRANTED or {}
        GRANTED[h[2]] = rec
        if h[2] == ID then
          REC = rec
        end
        USED = USED + h[4]
        WAITERS = WAITERS - 1
        ks.used, ks.waiters = ks.used + h[4], ks.waiters - 1
        publish(h[7], h[3] .. ' ' .. SEQ_TEXT)
        refreshKey(k)
      else
        -- (An entry the key's counters do not know of: only a hand outside the scripts leaves one.)
        redis.call('ZREM', READY, top)
      end
    end
  end
end
