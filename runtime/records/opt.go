package records

import "encoding/json"

// Opt is a field of a change: Set says whether the request named it at all, so that a PATCH can
// leave a field alone, set it, or (for pointer types, with null) clear it.
type Opt[T any] struct {
	Set bool
	V   T
}

// Some returns a set Opt.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, V: v} }

// UnmarshalJSON marks the field as set. encoding/json calls it for null too, which then sets the zero
// value (nil for pointers).
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.V)
}

// MarshalJSON writes the value, so inputs can be sent as well as read.
func (o Opt[T]) MarshalJSON() ([]byte, error) { return json.Marshal(o.V) }

// IsZero reports an unset field, so `json:",omitzero"` leaves it out of a request.
func (o Opt[T]) IsZero() bool { return !o.Set }
