package gitpack

import (
	"bytes"
	stdzlib "compress/zlib"
	"fmt"
	"io"
	"math/rand"
	"testing"

	kzlib "github.com/klauspost/compress/zlib"
)

// refInflate is the reference: klauspost's streaming zlib.
func refInflate(src []byte) ([]byte, error) {
	zr, err := kzlib.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func compressStd(data []byte, level int) []byte {
	var b bytes.Buffer
	zw, _ := stdzlib.NewWriterLevel(&b, level)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func compressK(data []byte, level int) []byte {
	var b bytes.Buffer
	zw, _ := kzlib.NewWriterLevel(&b, level)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func testData(rng *rand.Rand) [][]byte {
	var out [][]byte
	out = append(out, nil, []byte("x"), []byte("hello hello hello hello"))
	for _, n := range []int{10, 100, 300, 1000, 5000, 70000, 300000} {
		text := make([]byte, n)
		words := []string{"tree ", "parent ", "author ", "100644 ", "file-00042.txt\x00", "\n", "change ", "a", "zz"}
		for i := 0; i < n; {
			w := words[rng.Intn(len(words))]
			i += copy(text[i:], w)
		}
		out = append(out, text)
		random := make([]byte, n)
		rng.Read(random)
		out = append(out, random)
		skew := make([]byte, n)
		for i := range skew {
			skew[i] = byte(rng.ExpFloat64() * 3)
		}
		out = append(out, skew)
		runs := bytes.Repeat([]byte{byte(n)}, n)
		out = append(out, runs)
	}
	return out
}

func TestInflateMatchesZlib(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	for i, data := range testData(rng) {
		for _, level := range []int{-2, 0, 1, 2, 5, 6, 9} {
			for k, c := range [][]byte{compressStd(data, max(level, -1)), compressK(data, level)} {
				name := fmt.Sprintf("data %d (%d bytes) level %d writer %d", i, len(data), level, k)
				// Followed by more bytes, as in a pack.
				src := append(bytes.Clone(c), "trailing bytes"...)
				dst := make([]byte, len(data))
				n, err := inflateZlib(dst, src)
				if err != nil || n != len(c) || !bytes.Equal(dst, data) {
					t.Fatalf("%s: n %d of %d, %v", name, n, len(c), err)
				}
				// Wrong sizes and truncations fail.
				if len(data) > 0 {
					if _, err := inflateZlib(make([]byte, len(data)-1), src); err == nil {
						t.Fatalf("%s: accepted a smaller size", name)
					}
				}
				if _, err := inflateZlib(make([]byte, len(data)+1), src); err == nil {
					t.Fatalf("%s: accepted a larger size", name)
				}
				for _, cut := range []int{0, 1, 2, len(c) / 2, len(c) - 5, len(c) - 1} {
					if cut < 0 || cut >= len(c) {
						continue
					}
					if _, err := inflateZlib(make([]byte, len(data)), c[:cut]); err == nil {
						t.Fatalf("%s: accepted a cut at %d", name, cut)
					}
				}
			}
		}
	}
}

func TestInflateStoredBlocks(t *testing.T) {
	t.Parallel()
	data := []byte("stored, after many empty stored blocks")
	src := bloatedZlib(data, 50)
	dst := make([]byte, len(data))
	n, err := inflateZlib(dst, src)
	if err != nil || n != len(src) || !bytes.Equal(dst, data) {
		t.Fatalf("n %d of %d, %v", n, len(src), err)
	}
}

// TestInflateCorrupt flips bytes of valid streams: the result is an error
// or (where the damage is harmless) what the reference decoder gives;
// never a panic.
func TestInflateCorrupt(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(2))
	data := testData(rng)
	// Each stream is compressed once and damaged in many ways: the same
	// cases as compressing it for each iteration, without paying for the
	// compression 4,000 times (most of the test's time under -race).
	compressed := map[[2]int][]byte{}
	iterations := 4000
	if testing.Short() {
		iterations = 500
	}
	for iter := 0; iter < iterations; iter++ {
		i := rng.Intn(len(data))
		d := data[i]
		if len(d) > 20000 {
			d = d[:20000]
		}
		level := []int{1, 6, 9, -2}[rng.Intn(4)]
		if compressed[[2]int{i, level}] == nil {
			compressed[[2]int{i, level}] = compressK(d, level)
		}
		c := bytes.Clone(compressed[[2]int{i, level}])
		for k := 0; k < 1+rng.Intn(3); k++ {
			c[rng.Intn(len(c))] ^= byte(1 << rng.Intn(8))
		}
		dst := make([]byte, len(d))
		_, err := inflateZlib(dst, c)
		if err != nil {
			continue
		}
		ref, rerr := refInflate(c)
		if rerr == nil && !bytes.Equal(ref, dst) {
			t.Fatalf("iteration %d: accepted corrupt data that differs from the reference", iter)
		}
	}
}

func FuzzInflate(f *testing.F) {
	rng := rand.New(rand.NewSource(3))
	for _, d := range testData(rng)[:12] {
		f.Add(compressK(d, 6), len(d))
	}
	f.Fuzz(func(t *testing.T, src []byte, size int) {
		if size < 0 || size > 1<<20 {
			return
		}
		dst := make([]byte, size)
		n, err := inflateZlib(dst, src)
		if err != nil {
			return
		}
		ref, rerr := refInflate(src[:n])
		if rerr == nil && !bytes.Equal(ref, dst) {
			t.Fatalf("differs from the reference")
		}
	})
}

func BenchmarkInflateCommit(b *testing.B) {
	data := []byte("tree 6e5b4f2d9c8a7b6e5d4c3b2a1f0e9d8c7b6a5f4e\nparent 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b\nauthor Ada <ada@example.com> 1420070400 +0000\ncommitter Ada <ada@example.com> 1420070400 +0000\n\nChange 42 by Ada\n\nGenerated for the reference repository.\n")
	c := compressStd(data, 6)
	dst := make([]byte, len(data))
	b.Run("gitpack", func(b *testing.B) {
		for b.Loop() {
			if _, err := inflateZlib(dst, c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("klauspost", func(b *testing.B) {
		var zr io.ReadCloser
		var br bytes.Reader
		for b.Loop() {
			br.Reset(c)
			if _, err := inflateFrom(&zr, &br, int64(len(data)), 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
