package mtasts

import (
	"strconv"
	"testing"
)

// The memory holds at most its bound, forgetting the least recently used
// domain first.
func TestMemoBounded(t *testing.T) {
	m := newMemo(3)
	for i := range 3 {
		m.put(entry{domain: "d" + strconv.Itoa(i)})
	}
	if _, ok := m.get("d0"); !ok { // d0 is now the most recently used
		t.Fatal("d0 forgotten early")
	}
	m.put(entry{domain: "d3"})
	if _, ok := m.get("d1"); ok {
		t.Fatal("d1, the least recently used, was kept")
	}
	for _, d := range []string{"d0", "d2", "d3"} {
		if _, ok := m.get(d); !ok {
			t.Fatalf("%s forgotten", d)
		}
	}
	m.put(entry{domain: "d3", noneID: "x"})
	if e, _ := m.get("d3"); e.noneID != "x" || m.len() != 3 {
		t.Fatalf("replacing d3: %+v, %d entries", e, m.len())
	}
	for i := range 100 {
		m.put(entry{domain: "e" + strconv.Itoa(i)})
	}
	if m.len() != 3 {
		t.Fatalf("%d entries, bound 3", m.len())
	}
}
