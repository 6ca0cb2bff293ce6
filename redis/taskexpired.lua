-- Keeps, of the candidates TaskStore.Expired found in the lease set, those
-- whose lease still ended before now, and drops from the set those that
-- Redis has forgotten (their TTL passed): nothing stays in the set for
-- good.
-- KEYS[1]  the lease set
-- KEYS[2..] the candidates' hashes
-- ARGV[1]  now, Unix ms rounded up: a lease ended before now when it is
--          below this
-- ARGV[2..] the candidates' ids, in the order of their hashes
-- Returns the ids kept.
local leases, now_up = KEYS[1], tonumber(ARGV[1])
local kept = {}
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    redis.call('ZREM', leases, ARGV[i])
  else
    local lease = redis.call('ZSCORE', leases, ARGV[i])
    if lease and tonumber(lease) < now_up then
      kept[#kept + 1] = ARGV[i]
    end
  end
end
return kept
