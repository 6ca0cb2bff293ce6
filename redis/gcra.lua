-- GCRA (the generic cell rate algorithm) for one bucket, on Redis's clock.
-- KEYS[1]  the bucket: it holds the theoretical arrival time (TAT), in
--          microseconds since the Unix epoch, of the next request
-- ARGV[1]  the emission interval T: window / requests, in microseconds
-- ARGV[2]  the burst tolerance: the window, in microseconds (requests * T)
-- Returns {allowed (1 or 0), remaining, retry after (us), reset after (us)}.
-- Integers throughout: microseconds since 1970 stay below 2^53, so Lua's
-- doubles hold them exactly.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then
  tat = now
end
local next = tat + interval
local allow_at = next - window
if allow_at > now then
  return {0, 0, allow_at - now, tat - now}
end
-- The bucket is full again, and forgotten, once its TAT has passed.
redis.call('SET', KEYS[1], string.format('%d', next), 'PX', math.ceil((next - now) / 1000))
return {1, math.floor((now - allow_at) / interval), 0, next - now}
