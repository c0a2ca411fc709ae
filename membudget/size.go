package membudget

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// units are the suffixes ParseSize reads, binary (KiB = 1024) and decimal
// (KB = 1000), in the order they are tried.
var units = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// ParseSize reads a number of bytes written as 512MiB, 2GiB, 1.5GB or
// 1048576 (bytes).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num, factor := s, int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, factor = strings.TrimSpace(n), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || v*float64(factor) >= 1<<62 {
		return 0, fmt.Errorf("%q is not a size such as 512MiB, 2GiB or 1073741824", s)
	}
	return int64(v * float64(factor)), nil
}

// FormatSize writes n bytes the way people read them: 512MiB, 1.5GiB
// (one decimal at most, rounded down).
func FormatSize(n int64) string {
	for i := 3; i >= 0; i-- {
		if u := units[i]; n >= u.factor {
			tenths := math.Floor(float64(n) / float64(u.factor) * 10)
			return strconv.FormatFloat(tenths/10, 'f', -1, 64) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
