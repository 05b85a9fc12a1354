-- lease: re-leases a holder. Adopt: the caller's JVM takes it over, whoever owned it (its renewal
-- covers it from now on), and the former owner's JVM is told on its inbox, "<id> -<server time
-- us>" (a negative token: adopted elsewhere at that time), so it hears of the hand-over at once,
-- even if the lease is released right after; a lost message leaves it to its next renew. Extend:
-- its owner gives it a new lease length, which every later renew uses too.
-- KEYS: holders, state, queue, queue-deadline, info (see the shared part above)
-- ARGV: 1 limit, 2 permit id, 3 lease ms (0: keep the lease recorded with it), 4 inbox of the
--       caller's JVM, 5 take over (1: adopt; 0: extend, for its owner only), 6 owner
--       (host/pid/thread, recorded on adoption)
-- Returns: {used, limit, waiters, time, earliest, previous, override, status, count, token, lease}
--   status 1: the lease now ends lease ms from now (count, token and lease ms of the holder
--   follow); 0: the id holds nothing (expired, released, a waiter, unknown); -1: another JVM owns
--   it and ARGV 5 was 0, nothing changed.
-- Keeps I1..I6: only a holder's info and deadline change, never its count or token; a holder
-- without info (a hand outside the scripts) is dropped, as renew does.
local id = argId(2)
local lease = argNumber(3, 0, 86400000)
local inbox = argId(4)
local takeOver = ARGV[5] == '1'
local owner = ARGV[6] or ''

purge()
local status, r = 0, nil
if redis.call('ZSCORE', HOLDERS, id) then
  r = readInfo(id)
  if not r then
    dropHolder(id, nil)
  elseif not takeOver and r.inbox ~= inbox then
    status = -1
  else
    if lease > 0 then
      r.lease = lease
    end
    local from = r.inbox
    if takeOver then
      r.inbox, r.owner = inbox, owner
    end
    writeInfo(id, r)
    if from ~= r.inbox then
      publish(from, id .. ' -' .. string.format('%.0f', NOW_US))
    end
    extend(id, r.lease)
    status = 1
  end
end
grantWaiters()
if status ~= 1 then
  return finish({ status, 0, 0, 0 })
end
return finish({ status, r.count, tonumber(r.token), r.lease })
