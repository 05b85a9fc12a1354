-- lease: re-leases a holder. Adopt: the caller's JVM takes it over, whoever owned it (its renewal
-- covers it from now on), and the former owner's JVM is told on its inbox, "<id> -<server time
-- us>" (a negative token: adopted elsewhere at that time), so it hears of the hand-over at once,
-- even if the lease is released right after; a lost message leaves it to its next renew. Extend:
-- its owner gives it a new lease length, which every later renew uses too.
-- KEYS: deadlines, state, queue (see _args.lua); a capped semaphore's also heads, ready (_keys.lua)
--   (a semaphore with a rate: deadlines, state, queue, rate, and ARGV 1 "<permits> <rate-limit> <rate-period ms>"; _rate.lua)
-- ARGV 1, the limit: the caller's permits (TOTAL_TEXT); a capped semaphore's "<total-permits>
--   <permits> <key>" (TOTAL_TEXT, LIMIT_TEXT, KEY; see _names.lua)
-- ARGV: 1 limit, 2 permit id, 3 lease ms (0: keep the lease recorded with it), 4 inbox of the
--       caller's JVM, 5 take over (1: adopt; 0: extend, for its owner only), 6 owner
--       (host/pid/thread, recorded on adoption)
-- Returns: {used, waiters, time, earliest, limits, status, count, token, lease}
--   status 1: the lease now ends lease ms from now (count, token and lease ms of the holder
--   follow); 0: the id holds nothing (expired, released, a waiter, unknown); -1: another JVM owns
--   it and ARGV 5 was 0, nothing changed.
-- Keeps I1..I6: only a holder's record and deadline change, never its count or token.
--@include _names.lua
--@include _args.lua
local ID = argId(2)
local newLease = argNumber(3, 0, 86400000)
local inbox = argId(4)
local takeOver = ARGV[5] == '1'
local newOwner = ARGV[6] or ''
--@include _read.lua
--@include _load.lua
--@include _keys.lua
--@include _rate.lua
--@include _purge.lua

local count, lease, claim, token, owns, owner =
    string.match(REC or '', '^(%d+) (%d+) (%d+) (%d+) (%S+) (.*)$')
OWN1, OWN2, OWN3, OWN4 = 0, 0, 0, 0
if token and token ~= '0' then
  if not takeOver and owns ~= inbox then
    OWN1 = -1
  else
    if newLease > 0 then
      lease = newLease
    end
    local from = owns
    if takeOver then
      owns, owner = inbox, newOwner
    end
    NSETS = NSETS + 2
    SETS[NSETS - 1] = ID
    SETS[NSETS] = count .. ' ' .. lease .. ' ' .. claim .. ' ' .. token .. ' ' .. owns .. ' ' .. owner
    if from ~= owns then
      publish(from, ARGV[2] .. ' -' .. string.format('%.0f', NOW_US))
    end
    setDeadline(ID, lease)
    OWN1, OWN2, OWN3, OWN4 = 1, count + 0, token + 0, lease + 0
  end
end
--@include _grant.lua
--@include _finish.lua
return R
