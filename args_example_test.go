package mcpmw_test

import (
	"errors"
	"fmt"

	"github.com/mcpmw/mcpmw"
)

func ExampleArgs() {
	args := mcpmw.NewArgs([]byte(`{"message":"hi","limit":500}`))
	msg := args.String("message")
	limit := args.IntClamp("limit", 20, 1, 100) // clamps rather than refusing
	verbose := args.OptBool("verbose", false)   // absent: the default
	fmt.Println(msg, limit, verbose, args.Err())

	bad := mcpmw.NewArgs([]byte(`{"message":5,"limit":2.5}`))
	_ = bad.String("message")
	_ = bad.Int("limit") // a second problem; Err keeps the first
	var ae *mcpmw.ArgError
	if errors.As(bad.Err(), &ae) {
		fmt.Println(ae.Field+":", ae.Problem)
	}
	fmt.Println(bad.Err())
	// Output:
	// hi 100 false <nil>
	// message: must be a string, not a number
	// argument "message" must be a string, not a number
}
