package failing

import (
	"log"
	"net"
	"os"
	"testing"
	"time"
)

func TestAddSmall(t *testing.T) {
	if got := Add(1, 1); got != 2 {
		t.Fatalf("Add(1, 1) = %d", got)
	}
}

func TestAdd(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	log.SetOutput(os.Stdout)
	log.Printf("pid %d listening on %s", os.Getpid(), ln.Addr())
	t.Logf("started at %s (%v), scratch %s, state %p", time.Now().Format(time.RFC3339Nano), time.Now(), dir, &dir)
	if got, want := Add(1, 2), 4; got != want {
		t.Errorf("Add(1, 2) = %d, want %d", got, want)
	}
}

func TestLookup(t *testing.T) {
	table := map[string][]int{"a": {1, 2, 3}}
	t.Logf("looking up in %p", table)
	_ = table["a"][len(t.Name())]
}
