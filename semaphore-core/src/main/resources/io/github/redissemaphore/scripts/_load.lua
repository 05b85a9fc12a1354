-- Shared part 2 (see _args.lua): the server time and the state, in two commands. ID (the id the
-- script is about, or NO_ID) is declared by the script before it; its record comes with the state.

-- Server time only: clients' clocks never matter. (A string in arithmetic is a number in Lua.)
local clock = redis.call('TIME')
local NOW_US = clock[1] * 1000000 + clock[2]
local NOW_MS = (NOW_US - NOW_US % 1000) / 1000

local S = redis.call('HMGET', STATE, ' used', ' seq', ' expires', ' waiters', ' next', ' limits', ID)
local USED = (S[1] or 0) + 0
local EXPIRES = (S[3] or 0) + 0
local WAITERS = (S[4] or 0) + 0
-- Lower bound of the earliest deadline (0: none); purging waits for it to pass.
local EARLIEST = (S[5] or 0) + 0
-- ' limits': the configured limit of the previous call, then the override when one is set. The
-- usual case, no override and the same limit as the caller's, is told by comparing the texts.
local LIMITS = S[6]
local LAST_LIMIT, OVERRIDE = LIMITS, nil
if LIMITS and LIMITS ~= ARGV[1] then
  local last, override = string.match(LIMITS, '^(%d+) ?(%d*)$')
  LAST_LIMIT = last
  -- I6: the operator's limit, when set, is the limit of this call (the override script changes it).
  OVERRIDE = override and #override > 0 and override + 0 or nil
end
local SAVED_OVERRIDE = OVERRIDE
local LIMIT = OVERRIDE or CONFIGURED
-- What was read, so that only what changed is written back.
local USED_READ, WAITERS_READ, EARLIEST_READ = USED, WAITERS, EARLIEST
-- The counter, as a number once a grant or a ticket needs it, and its text as written.
local SEQ, SEQ_TEXT = nil, S[2]
-- The record of ID (false: none); kept up to date when this call grants or drops ID.
local REC = S[7]
-- Latest deadline this call wrote; queue created by this call (it starts without a TTL).
local HORIZON = NOW_MS
local CREATED_QUEUE = false
-- Set by renew: every key's TTL is set anew, a self-repair once per tick.
local REFRESH = false
-- Fields the final HSET writes (records of grants made here, then the counters), and the
-- records granted by this call, by id (nil until one is), which a later read must not miss.
local SETS = {}
local GRANTED = nil
-- The reply: the usage figures (filled in at the end), then the script's own entries from R[6].
local R = { 0, 0, 0, 0, 0 }
-- The head of the queue is looked at while a permit is free, or when the limit may have changed
-- under it (a head above the limit is then told it can never be served): otherwise nobody fits.
local CHECK_HEAD = LIMITS ~= ARGV[1]

-- A missing state key (never used, expired, or deleted by a hand outside the scripts), or one kept
-- past the expiry of the other keys by an override (I6): any deadline or queue entry left has no
-- record, and any record left has no deadline, so the semaphore starts anew (PEXPIREAT in the
-- past deletes a key), keeping the override and the counter. The deadlines key gets its sentinel,
-- '' at +inf, which keeps it (and so its TTL) while nobody holds or waits: it goes with the state.
if not S[2] or (EXPIRES > 0 and EXPIRES <= NOW_MS) then
  redis.call('PEXPIREAT', DEADLINES, 1)
  redis.call('PEXPIREAT', QUEUE, 1)
  redis.call('PEXPIREAT', STATE, 1)
  redis.call('ZADD', DEADLINES, '+inf', '')
  USED, WAITERS, EARLIEST, EXPIRES, REC = 0, 0, 0, 0, false
  USED_READ, WAITERS_READ, EARLIEST_READ, SAVED_OVERRIDE, LIMITS = -1, -1, -1, nil, false
  SEQ = (SEQ_TEXT or 0) + 0
  SEQ_TEXT = false
end

-- Tickets and fencing tokens: strictly increasing, and never below the server clock in
-- microseconds, so they keep increasing after the state key expired. Returns the new value's text.
local function nextSeq()
  SEQ = (SEQ or SEQ_TEXT or 0) + 1
  if SEQ < NOW_US then
    SEQ = NOW_US
  end
  SEQ_TEXT = string.format('%d', SEQ)
  return SEQ_TEXT
end

-- Sets the deadline of id (a lease, a claim, a heartbeat) to ms from now; the bounds follow it.
local function setDeadline(id, ms)
  local at = NOW_MS + ms
  redis.call('ZADD', DEADLINES, string.format('%d', at), id)
  if at > HORIZON then
    HORIZON = at
  end
  if EARLIEST == 0 or at < EARLIEST then
    EARLIEST = at
  end
end
