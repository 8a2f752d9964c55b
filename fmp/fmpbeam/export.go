package fmpbeam

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/tmpfile"
)

// This file writes data sets in the sharded text formats, in plain Go
// (no pipeline): the way in for a graph that one machine can still hold,
// and for the tests and the measurements.

// shardOf returns the shard of node i of n among shards: contiguous
// ranges of nodes, so that a file's lines fall into few blocks.
func shardOf(i, n, shards int) int { return int(int64(i) * int64(shards) / int64(n)) }

// ShardFile is the name of shard s of the files prefix-*.txt that
// WriteGraph, WriteNodes and WriteRows write: prefix-SSSSS.txt.
func ShardFile(prefix string, s int) string { return fmt.Sprintf("%s-%05d.txt", prefix, s) }

// writeShards writes shards files dir/prefix-SSSSS.txt, calling line(i, w)
// for every node i of n in order, each file written to a temporary name
// and renamed when complete.
func writeShards(dir, prefix string, shards, n int, line func(i int, w *bufio.Writer) error) error {
	if shards < 1 || n < 1 {
		return fmt.Errorf("fmpbeam: %d shards of %d nodes, want at least one of each", shards, n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("fmpbeam: %w", err)
	}
	i := 0
	for s := 0; s < shards; s++ {
		path := filepath.Join(dir, ShardFile(prefix, s))
		// (A new temporary file, created exclusively: never through a
		// symlink left at a predictable name.)
		f, err := tmpfile.Create(dir, filepath.Base(path)+".", ".tmp")
		if err != nil {
			return fmt.Errorf("fmpbeam: %w", err)
		}
		tmp := f.Name()
		w := bufio.NewWriterSize(f, 1<<20)
		for ; i < n && shardOf(i, n, shards) == s; i++ {
			if err := line(i, w); err != nil {
				f.Close()
				os.Remove(tmp)
				return err
			}
		}
		if err := w.Flush(); err == nil {
			err = f.Close()
		} else {
			f.Close()
		}
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("fmpbeam: %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("fmpbeam: %w", err)
		}
	}
	return nil
}

// WriteGraph writes a graph's edges as shards edge files
// dir/edges-SSSSS.txt: each undirected edge once, "u v" with u < v, in
// the shard of u.
func WriteGraph(dir string, shards int, g *graph.Graph) error {
	return writeShards(dir, "edges", shards, g.N(), func(u int, w *bufio.Writer) error {
		for _, v := range g.Neighbors(u) {
			if int(v) > u {
				w.WriteString(strconv.Itoa(u))
				w.WriteByte(' ')
				w.WriteString(strconv.Itoa(int(v)))
				w.WriteByte('\n')
			}
		}
		return nil
	})
}

// WriteNodes writes the nodes' labels, groups (−1 unknown) and split as
// shards node files dir/nodes-SSSSS.txt: lines "id label group split".
func WriteNodes(dir string, shards int, labels, sens []int, split datasets.Split) error {
	n := len(labels)
	if len(sens) != n {
		return fmt.Errorf("fmpbeam: WriteNodes: %d labels and %d groups", n, len(sens))
	}
	of := make([]string, n)
	for i := range of {
		of[i] = "-"
	}
	for _, l := range []struct {
		name  string
		nodes []int
	}{{"train", split.Train}, {"val", split.Val}, {"test", split.Test}} {
		for _, i := range l.nodes {
			if i < 0 || i >= n {
				return fmt.Errorf("fmpbeam: WriteNodes: the %s split holds node %d of %d", l.name, i, n)
			}
			of[i] = l.name
		}
	}
	return writeShards(dir, "nodes", shards, n, func(i int, w *bufio.Writer) error {
		_, err := fmt.Fprintf(w, "%d %d %d %s\n", i, labels[i], sens[i], of[i])
		return err
	})
}

// WriteRows writes n rows of c values as shards files
// dir/prefix-SSSSS.txt: lines "id v1 ... vc", each value in the shortest
// form that reads back to the same float64. row(i, dst) fills row i.
func WriteRows(dir, prefix string, shards, n, c int, row func(i int, dst []float64) error) error {
	buf := make([]float64, c)
	var num []byte
	return writeShards(dir, prefix, shards, n, func(i int, w *bufio.Writer) error {
		if err := row(i, buf); err != nil {
			return fmt.Errorf("fmpbeam: %s row %d: %w", prefix, i, err)
		}
		w.WriteString(strconv.Itoa(i))
		for _, v := range buf {
			w.WriteByte(' ')
			num = strconv.AppendFloat(num[:0], v, 'g', -1, 64)
			w.Write(num)
		}
		return w.WriteByte('\n')
	})
}

// WriteFeatures writes a feature source as shards files
// dir/features-SSSSS.txt (WriteRows).
func WriteFeatures(dir string, shards int, x features.Source) error {
	rows := []int{0}
	return WriteRows(dir, "features", shards, x.Rows(), x.Cols(), func(i int, dst []float64) error {
		rows[0] = i
		return features.Gather(x, rows, dst)
	})
}
