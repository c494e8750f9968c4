# Simulated verification. Each call counts an attempt; the output carries
# fresh timestamps, durations, addresses and temp paths every time, as real
# tools' output does, so only signatures that mask them see a repeat.
check=$1
n=$(( $(cat ".demo-$check.count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > ".demo-$check.count"
now=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
case $check in
build)
  echo "[$now] > tsc -p tsconfig.json"
  echo "src/index.ts:42:17 - error TS2339: Property 'listen' does not exist on type 'Config'."
  echo "Found 1 error in src/index.ts:42 (took $(( n * 7 + 3 ))ms), build id 0x$(date +%N)"
  exit 2 ;;
server)
  case $n in
  1|2)
    echo "[$now] GET http://127.0.0.1:$(( 30000 + n * 17 ))/health -> 500 Internal Server Error"
    echo "panic: runtime error: invalid memory address or nil pointer dereference"
    echo "goroutine $(( n * 11 + 6 )) [running]:"
    echo "main.healthHandler(0xc000$(date +%N | cut -c1-6))"
    echo "	/tmp/go-build$(date +%N)/b001/main.go:$(( 40 + n )) +0x1d"
    exit 1 ;;
  3)
    echo "[$now] GET http://127.0.0.1:$(( 30000 + n * 17 ))/health -> 500 Internal Server Error"
    echo "error: dial tcp 127.0.0.1:5432: connect: connection refused (after $(( n * 13 ))ms)"
    exit 1 ;;
  *)
    echo "[$now] GET /health -> 200 OK ($(( n * 3 ))ms)"
    exit 0 ;;
  esac ;;
esac
