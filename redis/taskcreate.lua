-- Stores a new task, unless its id is taken: TaskStore.Create. The hash's
-- fields are taskstore.go's (taskFields); the values come as the Go side
-- encoded them and are stored as they are.
-- KEYS[1]  the task's hash
-- KEYS[2]  the lease set: the tasks that are not terminal, by the end of
--          their lease on Redis's clock (Unix ms)
-- ARGV[1]  the task's id, its member in the lease set
-- ARGV[2]  when Redis forgets the task (Created + TTL, Unix ms on the
--          instance's clock), or '' for never
-- ARGV[3]  its lease (Unix ms on the instance's clock), or '' when it is
--          terminal (not in the set)
-- ARGV[4]  the instance's clock when it sent the call (Unix ms): the two
--          times above are moved by its difference from Redis's, in whole
--          seconds (see the TaskStore's doc)
-- ARGV[5..] field, value, field, value...
-- Returns 0 when the id is taken, 1 once the task is stored.
local task, leases, id, forget, lease = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', task) == 1 then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local skew = math.floor((now - tonumber(ARGV[4]) + 500) / 1000) * 1000
local function ms(x) -- an integer as Redis reads one (never 1e+12)
  return string.format('%d', x)
end
for i = 5, #ARGV, 2 do
  redis.call('HSET', task, ARGV[i], ARGV[i + 1])
end
if forget ~= '' then
  forget = tonumber(forget) + skew
  redis.call('PEXPIREAT', task, ms(forget)) -- a time already past deletes the task at once
end
if lease == '' or redis.call('EXISTS', task) == 0 then
  return 1
end
lease = tonumber(lease) + skew
redis.call('HSET', task, 'rlease', ms(lease))
-- The set lives as long as its longest-lived task: once every task in it
-- is forgotten, nothing in it matters, whether or not Expired ran.
local fresh = redis.call('EXISTS', leases) == 0
redis.call('ZADD', leases, ms(lease), id)
if forget == '' then
  redis.call('PERSIST', leases)
elseif fresh then
  redis.call('PEXPIREAT', leases, ms(forget))
else
  local left = redis.call('PTTL', leases) -- -1: kept for good (a task without TTL is in it)
  if left >= 0 and now + left < forget then
    redis.call('PEXPIREAT', leases, ms(forget))
  end
end
return 1
