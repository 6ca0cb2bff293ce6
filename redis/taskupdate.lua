-- Applies one TaskUpdate to one task, atomically: TaskStore.Update, with
-- exactly the meaning of mcpmw.Task.Apply (read them side by side). The
-- hash's fields are taskstore.go's (taskFields): a question is the field
-- 'q:' .. key, an answer 'a:' .. key, and 'nq' counts the questions of a
-- task that is not terminal, so that no JSON is ever decoded or encoded
-- here.
-- KEYS[1]  the task's hash
-- KEYS[2]  the lease set
-- ARGV[1]  the op, an mcpmw.TaskOp: 1 renew, 2 ask, 3 answer, 4 cancel,
--          5 finish, 6 reap
-- ARGV[2]  the task's id, its member in the lease set
-- ARGV[3]  Owner
-- ARGV[4]  LeaseUntil, Unix ms
-- ARGV[5]  State, '' for none
-- ARGV[6]  Status
-- ARGV[7]  Result, '' for none
-- ARGV[8]  Error, '' for none
-- ARGV[9]  Message
-- ARGV[10] Now, Unix ms rounded down: the new Updated
-- ARGV[11] Now, Unix ms rounded up: a lease (whole ms) ended before Now
--          when it is below this
-- ARGV[12] the instance's clock when it sent the call (Unix ms): a lease
--          and the Now of a reap are moved by its difference from Redis's,
--          in whole seconds (see the TaskStore's doc), so that a lease
--          ends, and a task is reaped, on Redis's clock
-- ARGV[13] Token: kept as 'ended' by the update that ends the task
-- ARGV[14..] key, value pairs: Requests (ask) or Responses (answer), only
--          as many as the task can use (TaskStore.Update sends an answer's
--          only once they are few, or are the task's questions)
-- Returns false when there is no such task, else {changed (0 or 1), the
-- task's fields after the update, packed as taskget.lua packs them}.
local task, leases, id = KEYS[1], KEYS[2], ARGV[2]
if redis.call('EXISTS', task) == 0 then
  return false
end
local op = tonumber(ARGV[1])
local owner, lease, state, status, result, err, message = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local now, now_up = ARGV[10], tonumber(ARGV[11])
local t = redis.call('TIME')
local skew = math.floor((tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[12]) + 500) / 1000) * 1000

local function terminal(s)
  return s == 'completed' or s == 'failed' or s == 'cancelled'
end
local function owned()
  return redis.call('HGET', task, 'owner') == owner
end
local function put(field, value) -- '' is none
  if value == '' then
    redis.call('HDEL', task, field)
  else
    redis.call('HSET', task, field, value)
  end
end
-- ends the task with status: no question left, out of the lease set
local function finish(s)
  for _, f in ipairs(redis.call('HKEYS', task)) do
    if string.sub(f, 1, 2) == 'q:' then
      redis.call('HDEL', task, f)
    end
  end
  redis.call('HSET', task, 'status', s, 'msg', message, 'updated', now)
  redis.call('HDEL', task, 'result', 'error', 'ended')
  if ARGV[13] ~= '' then
    redis.call('HSET', task, 'ended', ARGV[13])
  end
  redis.call('ZREM', leases, id)
end

local changed = 0
if terminal(redis.call('HGET', task, 'status')) then
  -- terminal stays terminal
elseif op == 1 then -- renew
  if owned() then
    local ends = string.format('%d', tonumber(lease) + skew) -- on Redis's clock
    redis.call('HSET', task, 'lease', lease, 'rlease', ends)
    redis.call('ZADD', leases, ends, id) -- never a terminal task's: that returned above
    changed = 1
  end
elseif op == 2 then -- ask: keys never used before in the task
  if owned() then
    local nq = tonumber(redis.call('HGET', task, 'nq'))
    for i = 14, #ARGV, 2 do
      if redis.call('HEXISTS', task, 'a:' .. ARGV[i]) == 0 and redis.call('HSETNX', task, 'q:' .. ARGV[i], ARGV[i + 1]) == 1 then
        nq = nq + 1
      end
    end
    redis.call('HSET', task, 'nq', nq)
    put('state', state)
    if nq > 0 then
      redis.call('HSET', task, 'status', 'input_required', 'msg', message, 'updated', now)
    end
    changed = 1
  end
elseif op == 3 then -- answer: outstanding keys only
  local nq = tonumber(redis.call('HGET', task, 'nq'))
  for i = 14, #ARGV, 2 do
    if redis.call('HDEL', task, 'q:' .. ARGV[i]) == 1 then
      redis.call('HSET', task, 'a:' .. ARGV[i], ARGV[i + 1])
      nq = nq - 1
      changed = 1
    end
  end
  if changed == 1 then
    redis.call('HSET', task, 'nq', nq)
    if nq == 0 then
      redis.call('HSET', task, 'status', 'working', 'msg', '', 'updated', now)
    end
  end
elseif op == 4 then -- cancel
  changed = redis.call('HSETNX', task, 'cancel', '1')
elseif op == 5 then -- finish
  if owned() and terminal(status) then
    finish(status)
    if status == 'completed' then
      put('result', result)
    elseif status == 'failed' then
      put('error', err)
    end
    changed = 1
  end
elseif op == 6 then -- reap
  local ends = redis.call('HGET', task, 'rlease') -- on Redis's clock
  if not ends then
    ends = redis.call('HGET', task, 'lease') -- a task stored before rlease was
  end
  if tonumber(ends) < now_up + skew then
    finish('failed')
    put('error', err)
    changed = 1
  end
end
local h = redis.call('HGETALL', task)
for i = 1, #h do
  h[i] = #h[i] .. ':' .. h[i]
end
return {changed, table.concat(h)}
