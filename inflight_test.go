package mcpmw

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

type ptrCaller struct{ name string }

func (*ptrCaller) Can(Capability) bool { return true }

type valCaller struct{ name string }

func (valCaller) Can(Capability) bool { return true }

type sliceCaller []string // not comparable: == would panic

func (sliceCaller) Can(Capability) bool { return true }

type idCaller struct {
	id    string
	roles []string
}

func (idCaller) Can(Capability) bool { return true }
func (c idCaller) CallerID() string  { return c.id }

func TestSameCaller(t *testing.T) {
	t.Parallel()
	p := &ptrCaller{"a"}
	for _, tt := range []struct {
		name string
		a, b Caller
		want bool
	}{
		{"same pointer", p, p, true},
		{"equal pointees are different callers", p, &ptrCaller{"a"}, false},
		{"equal values", valCaller{"a"}, valCaller{"a"}, true},
		{"different values", valCaller{"a"}, valCaller{"b"}, false},
		{"different types", valCaller{"a"}, p, false},
		{"not comparable", sliceCaller{"a"}, sliceCaller{"a"}, false},
		{"by CallerID", idCaller{"u1", []string{"x"}}, idCaller{"u1", nil}, true},
		{"by CallerID, different", idCaller{"u1", nil}, idCaller{"u2", nil}, false},
		{"CallerID on one side only", idCaller{"u1", nil}, valCaller{"u1"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, sameCaller(tt.a, tt.b))
		})
	}
}
