package mcpredis

import "time"

// WaitIdle waits, at most an hour, until none of c's queues has a command
// on the wire.
func (c *ReplayCache) WaitIdle() { c.s.batch.wait(time.Hour) }
