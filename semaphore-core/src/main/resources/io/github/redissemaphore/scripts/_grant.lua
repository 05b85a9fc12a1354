-- Shared part 5 (see _args.lua): serves the queue strictly in ticket order: the head is granted
-- when it fits, and nobody behind it is served before it (no overtaking). A grant starts with the
-- waiter's short claim lease, which its JVM's next renewal extends to the full lease, so a waiter
-- that died just before its grant blocks the permit for the claim only. Each grant is handed
-- straight to the waiting JVM on its inbox channel as "id token"; token 0 tells a waiter it can
-- never be served (the limit shrank below its request). Its record is written by the final HSET.
-- While no permit is free the head is not even read, unless a waiter may ask for more than the
-- limit (MOST, see _load.lua): it would be told so at the head. A capped semaphore serves its keys
-- instead, under both limits (see _keys.lua). With a rate, a head that fits is granted only with a
-- slot of the window, in the same call (R1, R2: _rate.lua).
if HEADS then
  serveKeys()
else
  local batch = GRANT_BATCH
  while WAITERS > 0 and batch > 0 and (USED < TOTAL_LIMIT or MOST > TOTAL_LIMIT) do
    batch = batch - 1
    local head = redis.call('ZRANGE', QUEUE, 0, 0)[1]
    if not head then
      WAITERS = 0
      break
    end
    local count, lease, claim, token, inbox, owner =
        string.match(redis.call('HGET', STATE, head) or '', '^(%d+) (%d+) (%d+) (%d+) (%S+) (.*)$')
    local waiter = count and token == '0'
    if waiter and count + 0 <= TOTAL_LIMIT and USED + count > TOTAL_LIMIT then
      break
    end
    -- R3: it fits the permits but waits for a slot of the rate (RATE_WAIT says until when).
    if waiter and count + 0 <= TOTAL_LIMIT and rateWait() > 0 then
      break
    end
    redis.call('ZREM', QUEUE, head)
    WAITERS = WAITERS - 1
    if waiter and count + 0 <= TOTAL_LIMIT then
      setDeadline(head, claim)
      token = nextSeq()
      local rec = count .. ' ' .. lease .. ' ' .. claim .. ' ' .. token .. ' ' .. inbox .. ' ' .. owner
      NSETS = NSETS + 2
      SETS[NSETS - 1], SETS[NSETS] = head, rec
      GRANTED = GRANTED or {}
      GRANTED[head] = rec
      if head == ID then
        REC = rec
      end
      USED = USED + count
      rateTake()
      publish(inbox, head .. ' ' .. token)
    elseif waiter then
      -- Above the limit of the call: told it can never be served.
      redis.call('ZREM', DEADLINES, head)
      redis.call('HDEL', STATE, head)
      if head == ID then
        REC = false
      end
      publish(inbox, head .. ' 0')
    elseif not count then
      -- A queue entry without a record (a hand outside the scripts) goes with its deadline.
      redis.call('ZREM', DEADLINES, head)
    end
    -- (A holder whose id a hand outside put in the queue only loses the queue entry.)
  end
end
