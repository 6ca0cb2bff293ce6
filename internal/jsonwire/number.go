package jsonwire

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
)

// JSON numbers compared and read exactly: as integers without float
// rounding, and as big integers within sane bounds.

// ParseInt parses the JSON number v exactly as an int: "1.0" and "1e2" are
// integers, "2.5" and "1e-400" are not, and no digit is lost to float
// rounding. integral is false for a number with a fractional part; exact is
// false for an integer beyond the range of int.
func ParseInt(v []byte) (n int, exact, integral bool) {
	if i, err := strconv.ParseInt(string(v), 10, 0); err == nil {
		return int(i), true, true // the common case
	}
	return decimalOf(v).int()
}

// A decimal is a JSON number as sign, significant digits and a decimal
// exponent: -1.50e2 is {neg, "15", 1}.
type decimal struct {
	neg    bool
	digits []byte // no leading or trailing zeros
	exp    int64
}

// decimalOf reads the valid JSON number v.
func decimalOf(v []byte) decimal {
	var d decimal
	i := 0
	if d.neg = len(v) > 0 && v[0] == '-'; d.neg {
		i++
	}
	d.digits, i = appendDigits(make([]byte, 0, 24), v, i)
	if i < len(v) && v[i] == '.' {
		n := len(d.digits)
		d.digits, i = appendDigits(d.digits, v, i+1)
		d.exp -= int64(len(d.digits) - n)
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		d.exp += exponentOf(v[i+1:])
	}
	d.trim()
	return d
}

// appendDigits appends the run of decimal digits of v from i to dst, and
// returns where the run ends.
func appendDigits(dst, v []byte, i int) ([]byte, int) {
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		dst = append(dst, v[i])
	}
	return dst, i
}

// trim drops leading zeros and moves trailing ones into the exponent.
func (d *decimal) trim() {
	for len(d.digits) > 0 && d.digits[0] == '0' {
		d.digits = d.digits[1:]
	}
	for len(d.digits) > 0 && d.digits[len(d.digits)-1] == '0' {
		d.digits = d.digits[:len(d.digits)-1]
		d.exp++
	}
}

// exponentOf reads the exponent after a JSON number's e, saturating far
// beyond any body's length of digits.
func exponentOf(v []byte) int64 {
	i, neg := 0, len(v) > 0 && v[0] == '-'
	if len(v) > 0 && (v[0] == '-' || v[0] == '+') {
		i++
	}
	var e int64
	for ; i < len(v); i++ {
		if e < 1e15 {
			e = e*10 + int64(v[i]-'0')
		}
	}
	if neg {
		return -e
	}
	return e
}

// int converts d to an int, as ParseInt reports it.
func (d decimal) int() (n int, exact, integral bool) {
	switch {
	case len(d.digits) == 0:
		return 0, true, true
	case d.exp < 0:
		return 0, false, false
	case int64(len(d.digits))+d.exp > 19: // more digits than any int64
		return 0, false, true
	}
	var u uint64
	for _, c := range d.digits {
		u = u*10 + uint64(c-'0')
	}
	for e := d.exp; e > 0; e-- {
		u *= 10
	}
	switch {
	case d.neg && u > uint64(math.MaxInt)+1, !d.neg && u > math.MaxInt:
		return 0, false, true
	case d.neg:
		return int(-u), true, true
	}
	return int(u), true, true
}

// BigIntegersEqual compares two JSON numbers exactly with math/big. It
// refuses (reports false for) numbers longer than 128 bytes or with an
// exponent beyond ±128, which no header parameter needs and which would
// make math/big expand huge powers of ten.
func BigIntegersEqual(a, b []byte) bool {
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
