package sim

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NameProblem says what is wrong with a name a user gave (a scenario's, a sweep's, a plan's),
// or "" when it is fine: at most MaxNameChars characters and no control characters, so pages
// and logs never carry megabytes of name or raw NUL and ESC bytes.
func NameProblem(name string) string {
	if n := utf8.RuneCountInString(name); n > MaxNameChars {
		return fmt.Sprintf("must be at most %d characters (got %d)", MaxNameChars, n)
	}
	if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Sprintf("must not contain control characters (found U+%04X at byte %d); use printable text", r, i)
	}
	return ""
}
