-- Shared part 3 (see _args.lua): makes sense of what _read.lua read, and nothing written.
-- The configured limits as numbers (see _names.lua): TOTAL_CONFIGURED, of the state's counters
-- (TOTAL_TEXT: the text the last call stored and checked, or checked now), and, capped only,
-- LIMIT_CONFIGURED, of each key (LIMIT_TEXT, 1..the cap).
local TOTAL_CONFIGURED, LIMIT_CONFIGURED = nil, nil
if HEADS then
  TOTAL_CONFIGURED, LIMIT_CONFIGURED = TOTAL_TEXT + 0, LIMIT_TEXT + 0
  if TOTAL_CONFIGURED < 1 or TOTAL_CONFIGURED > 1000000 or LIMIT_CONFIGURED < 1
      or LIMIT_CONFIGURED > TOTAL_CONFIGURED then
    error('semaphore script: ARGV[1] must start with "<total limit> <key limit>", integers within 1..1000000'
        .. ' and 1..the total limit, but was ' .. ARGV[1], 0)
  end
else
  TOTAL_CONFIGURED = S[6] == TOTAL_TEXT and TOTAL_TEXT + 0 or argNumber(1, 1, 1000000, TOTAL_TEXT)
end
local USED = (S[1] or 0) + 0
local EXPIRES = (S[3] or 0) + 0
local WAITERS = (S[4] or 0) + 0
-- Lower bound of the earliest deadline (0: none); purging waits for it to pass.
local EARLIEST = (S[5] or 0) + 0
-- ' limits': "<configured limit of the previous call> <override, 0: none> <most>", where most is
-- an upper bound of what a waiter in the queue asks for; just the limit when there is no override
-- and most is not above it. That usual case, with the caller's limit, is told by comparing texts.
-- A capped semaphore adds a fourth number: how many of its keys have a runtime limit of their own
-- (KEY_OVERRIDES; see _keys.lua), which keeps the state key as an override does (I6).
local LIMITS = S[6]
local LAST_TOTAL, OVERRIDE, MOST, KEY_OVERRIDES = LIMITS, nil, TOTAL_CONFIGURED, 0
if LIMITS ~= TOTAL_TEXT then
  local last, override, most, keyed = string.match(LIMITS or '0', '^(%d+) ?(%d*) ?(%d*) ?(%d*)$')
  LAST_TOTAL = LIMITS and last
  -- I6: the operator's limit, when set, is the limit of this call (the override script changes it).
  OVERRIDE = override and #override > 0 and override ~= '0' and override + 0 or nil
  MOST = most and #most > 0 and most + 0 or last + 0
  KEY_OVERRIDES = keyed and #keyed > 0 and keyed + 0 or 0
end
local SAVED_OVERRIDE, SAVED_KEY_OVERRIDES = OVERRIDE, KEY_OVERRIDES
local TOTAL_LIMIT = OVERRIDE or TOTAL_CONFIGURED
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
-- Fields and values the final HSET writes (records of grants made here, then the counters: NSETS
-- of them; room for six pairs is made at once, as growing a table costs more than a command), and
-- the records granted by this call (and a capped semaphore's new waiter), by id (nil until one is),
-- which a later read must not miss.
local SETS, NSETS = { nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil }, 0
local GRANTED = nil
-- The script's own entries of the reply, which follow the usage figures (see _finish.lua).
local OWN1, OWN2, OWN3, OWN4 = nil, nil, nil, nil

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
