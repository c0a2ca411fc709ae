package membudget

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Machine is the memory this process may use: the cgroup's limit when it
// runs under one (a container: cgroup v2's memory.max, or v1's
// memory.limit_in_bytes), otherwise the machine's physical memory
// (MemTotal of /proc/meminfo), whichever is less, and where it was read
// from. It is 0 where neither can be read (not Linux).
func Machine() (bytes int64, source string) {
	return machineFrom("/")
}

// machineFrom reads Machine's files under root, so that tests can give
// their own.
func machineFrom(root string) (int64, string) {
	total, source := memTotal(root+"proc/meminfo"), "physical memory (/proc/meminfo MemTotal)"
	for _, f := range []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if limit := cgroupLimit(root + f); limit > 0 && (total == 0 || limit < total) {
			return limit, "the cgroup memory limit (/" + f + ")"
		}
	}
	if total == 0 {
		return 0, ""
	}
	return total, source
}

// cgroupLimit reads a cgroup memory limit file: a number of bytes, or
// "max" (none). cgroup v1 writes a huge number for none, which the
// comparison with physical memory discards.
func cgroupLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// memTotal reads MemTotal (in KiB) from a meminfo file.
func memTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kib << 10
	}
	return 0
}
