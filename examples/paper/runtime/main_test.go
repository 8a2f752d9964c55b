package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRuntimeSmoke(t *testing.T) {
	o, err := parseFlags([]string{"-dataset", "synthetic", "-epochs", "2", "-warmup", "1"}, &bytes.Buffer{})
	require.NoError(t, err)
	o.shape.N, o.shape.MeanDegree = 200, 6
	var out, errOut bytes.Buffer
	if err := runWith(o, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"| MLP |", "| GCN |", "| GAT |", "| SGC |", "| APPNP |", "| JKNet |", "| FMP |", "epoch vs MLP"} {
		if !strings.Contains(out.String(), m) {
			t.Errorf("table lacks %q:\n%s", m, out.String())
		}
	}
}

func TestRuntimeFlagErrors(t *testing.T) {
	t.Setenv("FAIRMP_DATA", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-dataset", "bail"}, "pass -data DIR"},
		{[]string{"-dataset", "cora"}, `-dataset "cora"`},
		{[]string{"-models", "mlp,foo"}, `unknown model "foo"`},
		{[]string{"-epochs", "0"}, "-epochs 0"},
		{[]string{"-warmup", "-1"}, "-warmup -1"},
		{[]string{"-dtype", "float16"}, `-dtype "float16"`},
	} {
		err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q): err = %v, want it to contain %q", c.args, err, c.want)
		}
	}
}
