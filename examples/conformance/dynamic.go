package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/skills"
)

// A Registry holds functions, so no bus can carry it: a change made at run
// time must be made by the application on every instance, and each
// instance's Registry then tells its own listeners. dynamics does that for
// the entries the test_trigger_* tools add and remove: with Redis, a flip
// counts in Redis (INCR, so that concurrent flips are ordered) and is
// published to every instance, which applies each count once and in
// order; without, it flips this instance's Registry only.
type dynamics struct {
	reg    *mcpmw.Registry
	tool   mcpmw.Tool
	prompt mcpmw.Prompt
	skills *skills.Set // where test_trigger_skill_change adds dynamicSkill

	mu      sync.Mutex
	present map[string]bool  // this instance's view, by name
	applied map[string]int64 // the last flip count applied, by name

	rdb     redis.UniversalClient // nil: this instance only
	prefix  string                // of the counters: <prefix><name>
	channel string
}

// flip adds the entry name if it is absent, removes it otherwise, on every
// instance, and reports whether it is now present.
func (d *dynamics) flip(ctx context.Context, name string) (bool, error) {
	if d.rdb == nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.set(name, !d.present[name])
		return d.present[name], nil
	}
	n, err := d.rdb.Incr(ctx, d.prefix+name).Result()
	if err != nil {
		return false, fmt.Errorf("the fixture's Redis did not count the change: %w", err)
	}
	d.apply(name, n)
	if err := d.rdb.Publish(ctx, d.channel, name+" "+strconv.FormatInt(n, 10)).Err(); err != nil {
		return false, fmt.Errorf("the fixture's Redis did not tell the other instances: %w", err)
	}
	return n%2 == 1, nil
}

// apply makes name present when its flip count n is odd, unless a count
// as high was applied already (pub/sub from several instances may arrive
// out of order).
func (d *dynamics) apply(name string, n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n <= d.applied[name] {
		return
	}
	d.applied[name] = n
	d.set(name, n%2 == 1)
}

// set adds or removes name in the Registry, when that changes it; d.mu is
// held.
func (d *dynamics) set(name string, want bool) {
	if d.present[name] == want {
		return
	}
	d.present[name] = want
	switch {
	case name == dynamicSkill && want:
		d.skills.Add(dynamicSkill, dynamicSkillFiles, testCap)
	case name == dynamicSkill:
		d.skills.Remove(dynamicSkill)
	case name == d.tool.Name && want:
		d.reg.AddTools(d.tool)
	case name == d.tool.Name:
		d.reg.RemoveTools(name)
	case want:
		d.reg.AddPrompts(d.prompt)
	default:
		d.reg.RemovePrompts(name)
	}
}

// follow applies the flips every instance publishes, and the counts
// Redis holds now, until the returned func is called. It returns once the
// subscription is confirmed, so that no flip made after it is missed.
func (d *dynamics) follow(ctx context.Context) (stop func(), err error) {
	sub := d.rdb.Subscribe(ctx, d.channel)
	if _, err := sub.Receive(ctx); err != nil {
		_ = sub.Close()
		return nil, fmt.Errorf("the fixture's subscription to %s: %w", d.channel, err)
	}
	for _, name := range []string{d.tool.Name, d.prompt.Name, dynamicSkill} {
		if n, err := d.rdb.Get(ctx, d.prefix+name).Int64(); err == nil {
			d.apply(name, n)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for msg := range sub.Channel() {
			name, count, _ := strings.Cut(msg.Payload, " ")
			if n, err := strconv.ParseInt(count, 10, 64); err == nil && (name == d.tool.Name || name == d.prompt.Name || name == dynamicSkill) {
				d.apply(name, n)
			}
		}
	}()
	return func() { _ = sub.Close(); <-done }, nil
}
