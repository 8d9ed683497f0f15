package main

import (
	"fmt"
	"strconv"
)

// optionalShare is a flag holding a share of requests, such as 0.99; unset is nil.
type optionalShare struct{ v *float64 }

func (o *optionalShare) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'g', -1, 64)
}

func (o *optionalShare) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a share of requests such as 0.99 for 99 %% (got %q)", s)
	}
	o.v = &f
	return nil
}
