package signature_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/autoretry/orchestrator/signature"
)

func ExampleRules_Sum() {
	rules, err := signature.Compile(signature.Options{})
	if err != nil {
		log.Fatal(err)
	}
	first, _ := rules.Sum(strings.NewReader("--- FAIL: TestAdd (0.03s)\n    add_test.go:12: got 3, want 4\n"))
	rerun, _ := rules.Sum(strings.NewReader("--- FAIL: TestAdd (0.41s)\n    add_test.go:14: got 3, want 4\n"))
	other, _ := rules.Sum(strings.NewReader("--- FAIL: TestAdd (0.03s)\n    add_test.go:12: got 3, want 5\n"))
	fmt.Println(first == rerun, first == other)
	// Output: true false
}

func ExampleRules_Explain() {
	rules, err := signature.Compile(signature.Options{})
	if err != nil {
		log.Fatal(err)
	}
	out := "2026/01/02 15:04:05 \x1b[31mFAIL\x1b[0m dial tcp 127.0.0.1:38211: connection refused (pid 4242, after 1.5s)\n" +
		"\t/tmp/TestDial123/001/dial_test.go:42 +0x1d\n"
	if err := rules.Explain(os.Stdout, strings.NewReader(out)); err != nil {
		log.Fatal(err)
	}
	// Output:
	// <ts> FAIL dial tcp 127.0.0.1:<port>: connection refused (pid <n>, after <dur>)
	// <tmp>/dial_test.go:<line> +<hex>
}

func ExampleRules_NewDigest() {
	rules, err := signature.Compile(signature.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Hash a command's output while keeping a copy of it.
	var kept bytes.Buffer
	d := rules.NewDigest()
	w := io.MultiWriter(&kept, d)
	fmt.Fprintln(w, "--- FAIL: TestAdd (0.03s)")
	fmt.Fprint(w, "FAIL")
	fmt.Println(d.Sum() == rules.SumBytes(kept.Bytes()))
	// Output: true
}

func ExampleCompile() {
	rules, err := signature.Compile(signature.Options{
		Rules: signature.V1,
		Extra: []string{`request-id: [A-Za-z0-9]+`},
	})
	if err != nil {
		log.Fatal(err)
	}
	rules.Explain(os.Stdout, strings.NewReader("500 Internal Server Error (request-id: Zx81Qa) in 12ms\n"))

	_, err = signature.Compile(signature.Options{Rules: "v9"})
	fmt.Println(err)
	// Output:
	// 500 Internal Server Error (<redacted>) in <dur>
	// unknown signature rule set "v9" (known: "v3", "v2", "v1", "off")
}

func ExampleRaw() {
	sum, err := signature.Raw(strings.NewReader("hello\n"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum) // the same as: printf 'hello\n' | sha256sum
	// Output: 5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03
}

func ExampleStripANSI() {
	colored := []byte("\x1b[31mFAIL\x1b[0m TestDial")
	fmt.Printf("%s\n", signature.StripANSI(nil, colored))
	// Output: FAIL TestDial
}
