package sample

import "math/bits"

// The package's randomness is its own (splitmix64 and a Feistel
// permutation) rather than math/rand's, so that a batch is bit-identical
// across Go versions, not only across runs.

const golden = 0x9e3779b97f4a7c15

// mix64 is splitmix64's finaliser, a bijective 64-bit mixer.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Domain separators, so that the permutation key and batch seeds derived
// from the same (Seed, epoch) never coincide.
const (
	domainSample = 0x5a3c_11d7_2e91_b4f5
	domainBatch  = 0x7b1d_e8c2_0f43_96a1
	domainPerm   = 0xc6a4_a793_5bd1_e995
)

// sampleSeed is the initial state of the generator of Sampler.Sample.
func sampleSeed(seed int64) uint64 { return mix64(uint64(seed) ^ domainSample) }

// batchSeed is the initial state of the generator of batch i of an epoch.
func batchSeed(seed int64, epoch, i int) uint64 {
	z := mix64(uint64(seed) ^ domainBatch)
	z = mix64(z + golden*uint64(epoch+1))
	return mix64(z + golden*uint64(i+1))
}

// permKey is the key of the permutation of an epoch.
func permKey(seed int64, epoch int) uint64 {
	return mix64(mix64(uint64(seed)^domainPerm) + golden*uint64(epoch+1))
}

// rng is splitmix64 (Steele, Lea and Flood 2014): fast, 64-bit state,
// passes BigCrush.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// intn returns a uniform integer in [0, n), n > 0 (Lemire's method, no
// modulo bias).
func (r *rng) intn(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

const feistelRounds = 6

// perm is a keyed pseudo-random permutation of [0, n), evaluated one
// position at a time in O(1) expected time: a balanced Feistel network on
// the smallest power-of-four domain holding n, restricted to [0, n) by
// cycle walking (Black and Rogaway 2002). The domain is less than 4n, so
// fewer than 4 rounds of walking are needed on average.
type perm struct {
	n    uint64
	half uint // bits per Feistel half
	mask uint64
	keys [feistelRounds]uint64
}

func newPerm(n int, key uint64) perm {
	p := perm{n: uint64(n)}
	p.half = uint(bits.Len64(uint64(n-1))+1) / 2
	if p.half == 0 {
		p.half = 1
	}
	p.mask = 1<<p.half - 1
	r := rng{key}
	for k := range p.keys {
		p.keys[k] = r.next()
	}
	return p
}

func (p *perm) enc(x uint64) uint64 {
	l, r := x>>p.half, x&p.mask
	for _, k := range p.keys {
		l, r = r, l^(mix64(r^k)&p.mask)
	}
	return l<<p.half | r
}

// at returns the image of x in [0, n).
func (p *perm) at(x int) int {
	y := uint64(x)
	for {
		y = p.enc(y)
		if y < p.n {
			return int(y)
		}
	}
}
