package named

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type thing string

func (t thing) Name() string { return string(t) }

func TestNamesAndLookup(t *testing.T) {
	list := []thing{"a", "b"}
	assert.Equal(t, []string{"a", "b"}, Names(list))
	got, err := Lookup(list, "b", errors.New("x"))
	require.NoError(t, err)
	assert.Equal(t, thing("b"), got)
	unknown := errors.New("pkg: unknown method")
	_, err = Lookup(list, "c", unknown)
	assert.ErrorIs(t, err, unknown)
	assert.EqualError(t, err, `pkg: unknown method "c", want one of a, b`)
	assert.Empty(t, Names([]thing{}))
}
