module github.com/autoretry/orchestrator

go 1.24.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/rogpeppe/go-internal v1.14.1
	github.com/yuin/goldmark v1.8.7
	golang.org/x/sys v0.40.0
)

require golang.org/x/tools v0.26.0 // indirect
