package jsonwire

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Field is one member of a JSON object that encoding/json encodes a struct
// type into and decodes it from.
type Field struct {
	Name   string       // the member's name: the json tag's, else the Go field's
	Index  []int        // the field's index sequence (reflect.Type.FieldByIndex)
	Type   reflect.Type // the Go field's type
	Tagged bool         // the name came from the json tag
	Quoted bool         // the ",string" option applies: the value is JSON inside a string
}

// fieldLists is what encoding/json makes of one struct type's fields.
type fieldLists struct {
	members []Field // the fields encoding/json fills
	hidden  []Field // the fields a field of the same name hides
}

var structFieldLists sync.Map // reflect.Type → *fieldLists

// Fields returns the members of struct type t exactly as encoding/json
// names them (typeFields in encoding/json/encode.go), in field order:
//
//   - a field tagged `json:"-"` is left out, but `json:"-,"` is named "-";
//   - a tag name with a character encoding/json does not accept (a quote,
//     a backslash, an apostrophe…) is ignored, and the Go name used;
//   - unexported fields are left out, but an embedded struct is followed
//     whether its type is exported or not, by pointer too;
//   - an embedded struct with a tag name is a member of that name, not
//     promoted; without one, its fields are promoted;
//   - of the fields with one name, the shallowest wins, a tagged one
//     before an untagged one at the same depth; two at the same depth
//     and equally tagged hide each other, and the name is no member;
//   - ",string" quotes a bool, number or string field (pointer followed).
//
// It is computed once per type; the result is shared and must not be
// changed. It panics if t is not a struct type.
func Fields(t reflect.Type) []Field {
	return listsOf(t).members
}

// HiddenFields returns the fields of struct type t that encoding/json
// would name but never fills, because another field of the same name
// hides them (the rules on Fields), in field order; the fields of a
// struct embedded twice at one depth are there twice. The result is
// shared and must not be changed.
func HiddenFields(t reflect.Type) []Field {
	return listsOf(t).hidden
}

func listsOf(t reflect.Type) *fieldLists {
	if fl, ok := structFieldLists.Load(t); ok {
		return fl.(*fieldLists)
	}
	members, hidden := dominantFields(typeFields(t))
	fl, _ := structFieldLists.LoadOrStore(t, &fieldLists{members: members, hidden: hidden})
	return fl.(*fieldLists)
}

// typeFields is encoding/json's walk of t's fields, breadth first by
// embedding depth: every field that may name a member.
func typeFields(t reflect.Type) []Field {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	var fields []Field
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int // how often each struct of a depth is embedded
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		var current []embedded
		current, next = next, nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := 0; i < e.typ.NumField(); i++ {
				f, ok := fieldOf(e.typ.Field(i), e.index, i)
				if !ok {
					continue
				}
				if f.Name == "" { // an embedded struct without a tag name: its fields are promoted
					if nextCount[f.Type]++; nextCount[f.Type] == 1 {
						next = append(next, embedded{typ: f.Type, index: f.Index})
					}
					continue
				}
				fields = append(fields, f)
				if count[e.typ] > 1 {
					// Embedded twice at one depth: the copies hide each
					// other, as encoding/json's second entry makes them.
					fields = append(fields, f)
				}
			}
		}
	}
	return fields
}

// fieldOf reads the struct field sf, the i-th of a struct reached by the
// index sequence prefix, as encoding/json does. ok is false when the field
// is no member; a Field with no Name is an embedded struct whose fields
// are promoted (its Type the struct, pointer followed).
func fieldOf(sf reflect.StructField, prefix []int, i int) (f Field, ok bool) {
	if sf.Anonymous {
		t := sf.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if !sf.IsExported() && t.Kind() != reflect.Struct {
			return Field{}, false
		}
	} else if !sf.IsExported() {
		return Field{}, false
	}
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return Field{}, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if !validTagName(name) {
		name = ""
	}
	index := append(slices.Clip(prefix), i)
	ft := sf.Type
	if ft.Name() == "" && ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
		return Field{Index: index, Type: ft}, true
	}
	f = Field{Name: name, Index: index, Type: sf.Type, Tagged: name != ""}
	if !f.Tagged {
		f.Name = sf.Name
	}
	f.Quoted = hasOption(opts, "string") && quotable(ft.Kind())
	return f, true
}

// quotable reports whether ",string" applies to a field of kind k: a
// bool, a number or a string.
func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// dominantFields returns, of the fields of each name, the one encoding/json
// keeps (none when two tie), and the others, each in field order.
func dominantFields(fields []Field) (members, hidden []Field) {
	slices.SortStableFunc(fields, func(a, b Field) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.Index), len(b.Index)); c != 0 {
			return c
		}
		if a.Tagged != b.Tagged {
			if a.Tagged {
				return -1
			}
			return +1
		}
		return slices.Compare(a.Index, b.Index)
	})
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].Name == fields[i].Name {
			j++
		}
		if j == i+1 || len(fields[i].Index) < len(fields[i+1].Index) || fields[i].Tagged != fields[i+1].Tagged {
			members = append(members, fields[i])
			hidden = append(hidden, fields[i+1:j]...)
		} else {
			hidden = append(hidden, fields[i:j]...)
		}
		i = j
	}
	byIndex := func(a, b Field) int { return slices.Compare(a.Index, b.Index) }
	slices.SortFunc(members, byIndex)
	slices.SortStableFunc(hidden, byIndex)
	return members, hidden
}

// validTagName is encoding/json's isValidTag: letters, digits and most
// punctuation; not a quote, a backslash or a comma.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// hasOption reports whether the comma-separated tag options opts hold
// name.
func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}
