package svgplot

import (
	"encoding/xml"
	"errors"
	"strings"
	"unicode"
)

// subScale is a subscript's font size relative to its text's.
const subScale = 0.7

// Text boxes around the baseline, in ems of the font size: how far glyphs
// reach above it, and below it without and with a subscript.
const (
	ascent     = 0.8
	descent    = 0.25
	subDescent = 0.55
)

// run is a piece of text drawn on one baseline, plain or subscript.
type run struct {
	text string
	sub  bool
}

// Escape returns s with the markup characters "_" and "\" escaped, so
// that it is drawn as it is.
func Escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `_`, `\_`).Replace(s)
}

// parseMarkup splits s into plain and subscript runs (see the package
// documentation for the markup).
func parseMarkup(s string) ([]run, error) {
	var runs []run
	var cur strings.Builder
	inGroup := false
	flush := func(sub bool) {
		if cur.Len() > 0 {
			runs = append(runs, run{cur.String(), sub})
			cur.Reset()
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\\':
			if i+1 == len(rs) {
				return nil, errors.New(`ends in a lone "\" (write "\\" for a backslash)`)
			}
			i++
			cur.WriteRune(rs[i])
		case r == '_' && inGroup:
			return nil, errors.New(`has "_" inside "_{...}" (subscripts do not nest; write "\_" for an underscore)`)
		case r == '_':
			if i+1 == len(rs) {
				return nil, errors.New(`ends in "_" (write "\_" for an underscore)`)
			}
			flush(false)
			i++
			if rs[i] == '{' {
				inGroup = true
				continue
			}
			runs = append(runs, run{string(rs[i]), true})
		case r == '}' && inGroup:
			flush(true)
			inGroup = false
		default:
			cur.WriteRune(r)
		}
	}
	if inGroup {
		return nil, errors.New(`has an unclosed "_{"`)
	}
	flush(false)
	return runs, nil
}

// runeEm estimates a glyph's advance in ems, on the wide side of common
// sans-serif fonts (DejaVu Sans is the widest of the usual ones).
func runeEm(r rune) float64 {
	switch {
	case strings.ContainsRune("il.,:;'|!", r):
		return 0.35
	case strings.ContainsRune(" ()[]frtj", r):
		return 0.45
	case strings.ContainsRune("mwMW%@", r):
		return 1.0
	case strings.ContainsRune("≤≥±×−→", r):
		return 0.85
	case unicode.IsUpper(r):
		return 0.8
	}
	return 0.65
}

// textWidth estimates the width of runs drawn at font size size.
func textWidth(runs []run, size float64) float64 {
	w := 0.0
	for _, r := range runs {
		s := size
		if r.sub {
			s *= subScale
		}
		for _, c := range r.text {
			w += runeEm(c) * s
		}
	}
	return w
}

// hasSub reports whether runs hold a subscript.
func hasSub(runs []run) bool {
	for _, r := range runs {
		if r.sub {
			return true
		}
	}
	return false
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}
