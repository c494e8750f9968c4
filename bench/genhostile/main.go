// Command genhostile writes issue queues built to be slow to parse, for
// bench/hostile.sh: one kind of pathological markdown (see -list) of about
// the given size inside an otherwise valid queue. The same flags always
// give the same bytes.
//
// Usage:
//
//	genhostile -list
//	genhostile [-size BYTES] KIND > issue_queue.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/autoretry/orchestrator/internal/testkit/hostile"
)

func main() {
	size := flag.Int("size", 4<<20, "size of the queue in bytes")
	list := flag.Bool("list", false, "list the kinds, one a line: name and what it is")
	flag.Parse()
	if *list {
		for _, k := range hostile.Kinds() {
			fmt.Printf("%s\t%s\n", k.Name, k.What)
		}
		return
	}
	if flag.NArg() != 1 || *size < 0 {
		fmt.Fprintln(os.Stderr, "usage: genhostile [-size BYTES] KIND   or   genhostile -list")
		os.Exit(2)
	}
	b, err := hostile.Generate(flag.Arg(0), *size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genhostile:", err)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	if _, err := w.Write(b); err != nil {
		fmt.Fprintln(os.Stderr, "genhostile:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "genhostile:", err)
		os.Exit(1)
	}
}
