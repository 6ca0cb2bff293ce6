-- Keeps, of the candidates TaskStore.Expired found in the lease set, those
-- Redis still has, and drops from the set those it has forgotten (their
-- TTL passed): nothing stays in the set for good.
-- KEYS[1]  the lease set
-- KEYS[2..] the candidates' hashes
-- ARGV[1..] the candidates' ids, in the order of their hashes
-- Returns the ids kept.
local leases = KEYS[1]
local kept = {}
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    kept[#kept + 1] = ARGV[i - 1]
  else
    redis.call('ZREM', leases, ARGV[i - 1])
  end
end
return kept
