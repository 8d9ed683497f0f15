package web

import "errors"

// errAs is errors.As, named so that call sites read as conditions.
func errAs(err error, target any) bool { return err != nil && errors.As(err, target) }
