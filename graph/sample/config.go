package sample

import "fmt"

// Config controls a Sampler. The zero value is not the default: start from
// DefaultConfig.
type Config struct {
	// Fanouts[h] is the number of neighbours sampled for a node first
	// reached at hop h (h = 0 for the target nodes); len(Fanouts) is the
	// number of model layers L (>= 1). -1 takes every neighbour (PyG's
	// convention). Other values must be >= 1.
	Fanouts []int
	// BatchSize is the number of target nodes per batch (>= 1). Default 1024.
	BatchSize int
	// Shuffle permutes the target nodes every epoch (seeded by Seed and the
	// epoch). Default true.
	Shuffle bool
	// Seed seeds every random choice. Default 1.
	Seed int64
}

// DefaultConfig returns the defaults: two layers with fan-outs {10, 10}
// (a common NeighborLoader setting), batches of 1024 targets, shuffled
// every epoch, seed 1.
func DefaultConfig() Config {
	return Config{Fanouts: []int{10, 10}, BatchSize: 1024, Shuffle: true, Seed: 1}
}

// Validate returns an error naming the first invalid field and what was
// expected.
func (c Config) Validate() error {
	if len(c.Fanouts) == 0 {
		return fmt.Errorf("sample: Config.Fanouts is empty, want one fan-out per model layer (at least 1)")
	}
	for h, f := range c.Fanouts {
		if f != -1 && f < 1 {
			return fmt.Errorf("sample: Config.Fanouts[%d] = %d, want -1 (every neighbour) or a value >= 1", h, f)
		}
	}
	if c.BatchSize < 1 {
		return fmt.Errorf("sample: Config.BatchSize = %d, want >= 1", c.BatchSize)
	}
	return nil
}
