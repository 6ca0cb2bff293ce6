-- GCRA (the generic cell rate algorithm) for one bucket, on Redis's clock.
-- KEYS[1]  the bucket: it holds the theoretical arrival time (TAT), in
--          microseconds since the Unix epoch, of the next request
-- ARGV[1]  the emission interval T: window / requests, in microseconds
-- ARGV[2]  the burst tolerance: the window, in microseconds (requests * T)
-- ARGV[3]  how many requests to take at once, at most (a lease; 1 without)
-- ARGV[4]  how many requests of ended leases to give back first (unspent)
-- Returns {taken (0 to ARGV[3]), remaining, retry after (us), reset after (us)}:
-- as many as the bucket has room for, up to ARGV[3], or none at all.
-- Integers throughout: microseconds since 1970 stay below 2^53, so Lua's
-- doubles hold them exactly.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local back = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then
  tat = now
end
-- Given back: the bucket regains what was taken and not spent, never
-- beyond full.
tat = math.max(tat - back * interval, now)
-- room: how many requests fit now (n of them fit when tat + n*interval - window <= now).
local room = math.floor((now + window - tat) / interval)
-- (Never refused after a give-back: what was taken never passes the
-- window, tat <= now + window, so one given back leaves room for one.)
if room < 1 then
  return {0, 0, tat + interval - window - now, tat - now}
end
local n = math.min(want, room)
local next = tat + n * interval
-- The bucket is full again, and forgotten, once its TAT has passed.
redis.call('SET', KEYS[1], string.format('%d', next), 'PX', math.ceil((next - now) / 1000))
return {n, room - n, 0, next - now}
