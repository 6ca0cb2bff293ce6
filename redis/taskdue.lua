-- Lists the tasks whose lease ended before a time, on Redis's clock: the
-- first step of TaskStore.Expired (taskexpired.lua is the second).
-- KEYS[1]  the lease set: the tasks that are not terminal, by the end of
--          their lease on Redis's clock (Unix ms)
-- ARGV[1]  the time, Unix ms rounded up, on the instance's clock: a lease
--          (whole ms) ended before it when it is below this
-- ARGV[2]  the instance's clock when it sent the call (Unix ms): the time
--          is moved by its difference from Redis's, in whole seconds (see
--          the TaskStore's doc)
-- ARGV[3]  at most how many ids
-- Returns the ids, the earliest leases first.
local t = redis.call('TIME')
local skew = math.floor((tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[2]) + 500) / 1000) * 1000
local before = string.format('(%d', tonumber(ARGV[1]) + skew)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', before, 'LIMIT', 0, ARGV[3])
