package mcpredis

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What a client sends reaches Redis only as far as the task can use it:
// Redis runs one script at a time for every instance, so a script whose
// work grew with a request would stall every call of every instance (a
// rate-limit check, a lease renewal) for as long as it ran.

const (
	// maxSentAnswers and maxSentAnswerBytes bound the answers Update
	// sends as they come (one round trip): beyond either, it first reads
	// which keys the task is waiting for (HKEYS, as long as the task's
	// own fields) and sends only the answers to those.
	maxSentAnswers     = 64
	maxSentAnswerBytes = 64 << 10

	// maxCreateAnswers bounds the answers a task is created with (those
	// to questions asked before it became a task): Create refuses more.
	maxCreateAnswers = 1024

	// maxExpired bounds the ids one Expired call lists, whatever its
	// limit.
	maxExpired = 1000
)

// answersToSend returns the responses of a TaskAnswer that the script is
// given: all of them when they are few and small, otherwise only those
// whose key the task id is waiting for, read first with one HKEYS within
// bounded (an error then is the call's, ctx being the caller's).
func (s *TaskStore) answersToSend(ctx, bounded context.Context, id string, responses map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	size := 0
	for k, v := range responses {
		size += len(k) + len(v)
	}
	if len(responses) <= maxSentAnswers && size <= maxSentAnswerBytes {
		return responses, nil
	}
	key := s.tasks + id
	cmd := redis.NewStringSliceCmd(bounded, "hkeys", key)
	if err := s.outcome(ctx, "update", s.s.batch.do(bounded, key, cmd)); err != nil {
		return nil, err
	}
	asked := map[string]json.RawMessage{}
	for _, f := range cmd.Val() {
		if k, ok := strings.CutPrefix(f, "q:"); ok {
			if v, answered := responses[k]; answered {
				asked[k] = v
			}
		}
	}
	return asked, nil
}
