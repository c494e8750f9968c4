package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/internal/views/fleet"
	"github.com/autoretry/orchestrator/internal/views/serve"
)

func init() {
	register(&command{
		name:        "serve",
		summary:     "a read-only web page per repository, updated live",
		longRunning: true,
		usage: `Usage: orchestrator serve [--addr HOST:PORT] [--token-file FILE] [--from FILE] [DIR…]

Serves a read-only page for each repository (DIR is a project or its state
directory; none: this one) and, with several, a page for the fleet: the
issues with their IDs and summaries, the current loop and its latest
output, the day's budgets, and the recent stops with their reason codes.
Open pages update by themselves when a state file changes (server-sent
events); nothing on them comes from another host. With one DIR, / is its
page.

It only reads: every method but GET and HEAD is refused (405), and no
state file is changed. It listens on the loopback address unless --addr
says otherwise, and then only with a token: requests without it get 401.

Flags:
    --addr HOST:PORT     where to listen (default 127.0.0.1:8765)
    --token-file FILE    a file holding the token that every request must
                         carry, as "Authorization: Bearer TOKEN" or
                         ?token=TOKEN (required off the loopback address)
    --from FILE          more directories, one a line (as 'fleet' reads them)

Examples:
    orchestrator serve
    orchestrator serve ~/src/api ~/src/web
    orchestrator serve --addr 0.0.0.0:8765 --token-file ~/.orchestrator-token ~/src/*
`,
		run: runServe,
	})
}

func runServe(ctx context.Context, e *env, args []string) error {
	c := commands["serve"]
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8765", "")
	tokenFile := fs.String("token-file", "", "")
	from := fs.String("from", "", "")
	names, err := e.parseFlags(c, fs, args)
	if err != nil {
		return err
	}
	if *from != "" {
		l, err := fleet.ReadList(*from)
		if err != nil {
			return withCode(exitUsage, err)
		}
		names = append(names, l...)
	}
	if len(names) == 0 {
		names = []string{e.dir}
	}
	names, dirs := uniqueDirs(names)
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return withCode(exitUsage, fmt.Errorf("state directory %s does not exist", d), "run '"+self+" init' there, or name another directory")
		}
	}
	token := ""
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("--token-file: %w", err))
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return usageErr(c, "--token-file %s is empty", *tokenFile)
		}
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return usageErr(c, "--addr %q: %v", *addr, err)
	}
	if !loopback(host) && token == "" {
		return usageErr(c, "--addr %s is not a loopback address: --token-file is required there", *addr)
	}
	s := &serve.Server{Names: names, Dirs: dirs, Token: token, Self: self}
	if fixed, err := e.now(); err == nil && e.getenv("ORCHESTRATOR_NOW") != "" {
		s.Now = func() time.Time { return fixed }
	}
	if err := s.Watch(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return withCode(exitUsage, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stderr, "orchestrator: serving %d repositor%s on http://%s/ (read-only)\n", len(dirs), plural(len(dirs), "y", "ies"), ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loopback reports whether host names only this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
