-- A task's hash, for TaskStore.Get, as one string: each field and each
-- value as <length>:<bytes>, one after the other, field first, so that the
-- reply is one bulk string, which go-redis reads with one allocation
-- (HGETALL's reply costs two per field, and a map).
-- KEYS[1]  the task
-- Returns "" when there is no such task (a task always has fields).
local h = redis.call('HGETALL', KEYS[1])
for i = 1, #h do
  h[i] = #h[i] .. ':' .. h[i]
end
return table.concat(h)
