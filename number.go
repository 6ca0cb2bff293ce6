package mcpmw

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
)

// JSON numbers compared and read exactly: as integers without float
// rounding, and as big integers within sane bounds.

// parseInt parses the JSON number v exactly as an int: "1.0" and "1e2" are
// integers, "2.5" and "1e-400" are not, and no digit is lost to float
// rounding. integral is false for a number with a fractional part; exact is
// false for an integer beyond the range of int.
func parseInt(v []byte) (n int, exact, integral bool) {
	if i, err := strconv.ParseInt(string(v), 10, 0); err == nil {
		return int(i), true, true
	}
	i, neg := 0, len(v) > 0 && v[0] == '-'
	if neg {
		i++
	}
	digits := make([]byte, 0, 24)
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		digits = append(digits, v[i])
	}
	var exp int64 // decimal exponent of digits
	if i < len(v) && v[i] == '.' {
		for i++; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			digits = append(digits, v[i])
			exp--
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		eneg := i < len(v) && v[i] == '-'
		if i < len(v) && (v[i] == '-' || v[i] == '+') {
			i++
		}
		var e int64
		for ; i < len(v); i++ {
			if e < 1e15 { // saturate: far beyond any body's length of digits
				e = e*10 + int64(v[i]-'0')
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	switch {
	case len(digits) == 0:
		return 0, true, true
	case exp < 0:
		return 0, false, false
	case int64(len(digits))+exp > 19: // more digits than any int64
		return 0, false, true
	}
	var u uint64
	for _, d := range digits {
		u = u*10 + uint64(d-'0')
	}
	for ; exp > 0; exp-- {
		u *= 10
	}
	if neg {
		if u > uint64(math.MaxInt)+1 {
			return 0, false, true
		}
		return int(-u), true, true
	}
	if u > math.MaxInt {
		return 0, false, true
	}
	return int(u), true, true
}

// bigIntegersEqual compares two JSON numbers exactly with math/big. It
// refuses (reports false for) numbers longer than 128 bytes or with an
// exponent beyond ±128, which no header parameter needs and which would
// make math/big expand huge powers of ten.
func bigIntegersEqual(a, b []byte) bool {
	parse := func(v []byte) *big.Rat {
		if len(v) > 128 {
			return nil
		}
		if i := bytes.IndexAny(v, "eE"); i >= 0 {
			exp, err := strconv.Atoi(string(v[i+1:]))
			if err != nil || exp > 128 || exp < -128 {
				return nil
			}
		}
		r, ok := new(big.Rat).SetString(string(v))
		if !ok {
			return nil
		}
		return r
	}
	x, y := parse(a), parse(b)
	return x != nil && y != nil && x.IsInt() && x.Cmp(y) == 0
}
