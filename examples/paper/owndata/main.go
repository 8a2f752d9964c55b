// Command owndata measures the own-data loader (datasets.LoadFiles) on
// files as users ship them: it converts a node table and an edge list to
// Parquet (written by the library the loader reads them with,
// github.com/parquet-go/parquet-go, snappy-compressed) and times a load,
// reporting the process's peak resident memory.
//
//	go run ./owndata -convert -nodes $FAIRMP_DATA/bail/bail.csv -edges $FAIRMP_DATA/bail/bail_edges.txt -out /tmp/bailpq
//	go run ./owndata -nodes /tmp/bailpq/bail.parquet -edges /tmp/bailpq/bail_edges.parquet -label RECID -sens WHITE
//
// Run one load per process: the peak memory (VmHWM) is the process's.
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/blas"
)

func main() {
	blas.Default() // fairmp's BLAS before any graph runs (see internal/blas)
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "owndata:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("owndata", flag.ContinueOnError)
	convert := fs.Bool("convert", false, "convert -nodes and -edges to Parquet in -out instead of loading")
	nodes := fs.String("nodes", "", "node table")
	edges := fs.String("edges", "", "edge list")
	out := fs.String("out", "", "folder for -convert")
	label := fs.String("label", "", "label column")
	sens := fs.String("sens", "", "sensitive column")
	repeat := fs.Int("repeat", 5, "loads to time (the median is reported)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *convert {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		base := func(p string) string {
			return filepath.Join(*out, strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))+".parquet")
		}
		if err := tableToParquet(*nodes, base(*nodes)); err != nil {
			return err
		}
		if err := edgesToParquet(*edges, base(*edges)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s and %s\n", base(*nodes), base(*edges))
		return nil
	}
	c := datasets.DefaultFilesConfig()
	c.Nodes, c.Edges, c.LabelColumn, c.SensColumn = *nodes, *edges, *label, *sens
	var times []time.Duration
	var ds *datasets.Dataset
	for k := 0; k < *repeat; k++ {
		runtime.GC()
		start := time.Now()
		var err error
		if ds, err = datasets.LoadFiles(c); err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	for i := range times {
		for j := i + 1; j < len(times); j++ {
			if times[j] < times[i] {
				times[i], times[j] = times[j], times[i]
			}
		}
	}
	fmt.Fprintf(stdout, "%s + %s: %d nodes, %d edges, %d features; load %v (median of %d, min %v); peak RSS %s\n",
		filepath.Base(*nodes), filepath.Base(*edges), ds.N(), ds.Graph.NumEdges(), ds.NumFeatures,
		times[len(times)/2].Round(time.Millisecond), len(times), times[0].Round(time.Millisecond), peakRSS())
	return nil
}

// peakRSS is the process's peak resident memory (VmHWM), Linux only.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// tableToParquet writes a CSV node table as Parquet: integral columns as
// int64, others as double (columns in the name order parquet.Group gives).
func tableToParquet(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	recs, err := csv.NewReader(bufio.NewReader(f)).ReadAll()
	if err != nil {
		return err
	}
	head, rows := recs[0], recs[1:]
	integral := make([]bool, len(head))
	for k := range head {
		integral[k] = true
		for _, r := range rows {
			if _, err := strconv.ParseInt(r[k], 10, 64); err != nil {
				integral[k] = false
				break
			}
		}
	}
	group := parquet.Group{}
	for k, h := range head {
		if integral[k] {
			group[h] = parquet.Leaf(parquet.Int64Type)
		} else {
			group[h] = parquet.Leaf(parquet.DoubleType)
		}
	}
	schema := parquet.NewSchema("nodes", group)
	order := make([]int, len(head)) // schema column → CSV column
	for j, path := range schema.Columns() {
		for k, h := range head {
			if h == path[0] {
				order[j] = k
			}
		}
	}
	batch := make([]parquet.Row, 0, len(rows))
	for _, r := range rows {
		row := make(parquet.Row, len(head))
		for j, k := range order {
			if integral[k] {
				v, _ := strconv.ParseInt(r[k], 10, 64)
				row[j] = parquet.Int64Value(v).Level(0, 0, j)
			} else {
				v, err := strconv.ParseFloat(r[k], 64)
				if err != nil {
					return fmt.Errorf("%s: %q: %w", in, r[k], err)
				}
				row[j] = parquet.DoubleValue(v).Level(0, 0, j)
			}
		}
		batch = append(batch, row)
	}
	return writeRows(out, schema, batch)
}

// edgesToParquet writes an edge list of two integers per line as Parquet
// columns source and target (int64).
func edgesToParquet(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	schema := parquet.NewSchema("edges", parquet.Group{"source": parquet.Leaf(parquet.Int64Type), "target": parquet.Leaf(parquet.Int64Type)})
	var batch []parquet.Row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		u, err1 := strconv.ParseInt(fs[0], 10, 64)
		v, err2 := strconv.ParseInt(fs[1], 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%s: %q is not two integers", in, sc.Text())
		}
		batch = append(batch, parquet.Row{parquet.Int64Value(u).Level(0, 0, 0), parquet.Int64Value(v).Level(0, 0, 1)})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return writeRows(out, schema, batch)
}

func writeRows(out string, schema *parquet.Schema, rows []parquet.Row) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := parquet.NewWriter(f, schema, parquet.Compression(&parquet.Snappy))
	if _, err := w.WriteRows(rows); err != nil {
		f.Close()
		return err
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
