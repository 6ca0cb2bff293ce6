package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mcpmw/mcpmw/internal/roundrobin"
	"github.com/redis/go-redis/v9"
)

// The I/O workload's contestants: each a process of its own (this binary
// re-executed), ours also as 1 and 3 processes behind the round-robin
// proxy of the scale-out tests (internal/roundrobin), served from the
// harness's process.
var ioContestantNames = []string{"ours", "ours-rr1", "ours-rr3", "gosdk", "mcpgo"}

// ioContestantTitle is a contestant's label in the table.
func ioContestantTitle(name string) string {
	switch name {
	case "ours-rr1":
		return "ours, 1 instance behind the proxy"
	case "ours-rr3":
		return "ours, 3 instances behind the proxy"
	}
	return name
}

// ioConfig is an I/O workload run.
type ioConfig struct {
	vus              int
	duration, warmup time.Duration
	rounds           int
	modes            []ioMode
	contestants      []string
	seed             seedSize
	command          string
}

// ioCellKey names a row of the table.
type ioCellKey struct {
	mode       ioMode
	contestant string
}

// ioReport is an I/O workload run's figures.
type ioReport struct {
	cfg               ioConfig
	started, finished time.Time
	cells             map[ioCellKey][]ioResult
}

func (r *ioReport) failed() bool {
	for _, rs := range r.cells {
		for _, res := range rs {
			if res.errors > 0 {
				return true
			}
		}
	}
	return false
}

// ioServer is a contestant being served: its URL and what to stop.
type ioServer struct {
	url      string
	children []*child
	proxy    *http.Server
}

func (s *ioServer) stop() {
	if s.proxy != nil {
		_ = s.proxy.Close()
	}
	for _, c := range s.children {
		c.stop()
	}
}

// startIOServer starts the named contestant's processes (and the proxy in
// front of ours's when the name asks for it).
func startIOServer(name string, maxLife time.Duration) (*ioServer, error) {
	proc, instances := name, 0
	switch name {
	case "ours-rr1":
		proc, instances = "ours", 1
	case "ours-rr3":
		proc, instances = "ours", 3
	}
	s := &ioServer{}
	for range max(1, instances) {
		c, err := startChild(proc, setup{io: true}, maxLife)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.children = append(s.children, c)
	}
	if instances == 0 {
		s.url = s.children[0].url
		return s, nil
	}
	var backends []string
	for _, c := range s.children {
		backends = append(backends, strings.TrimSuffix(c.url, "/mcp"))
	}
	p, err := roundrobin.New(backends...)
	if err != nil {
		s.stop()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.stop()
		return nil, err
	}
	s.proxy = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.proxy.Serve(ln) }()
	s.url = "http://" + ln.Addr().String() + "/mcp"
	return s, nil
}

// runIO runs the I/O workload: a redis-server and the API, each
// contestant started once, then round by round, for each mode, each
// contestant in rotated order on freshly seeded Redis.
func runIO(ctx context.Context, cfg ioConfig, log io.Writer) (*ioReport, error) {
	rep := &ioReport{cfg: cfg, started: time.Now(), cells: map[ioCellKey][]ioResult{}}
	maxLife := time.Duration(cfg.rounds*len(cfg.modes)*len(cfg.contestants))*(cfg.duration+cfg.warmup+30*time.Second) + time.Minute

	srv, err := startRedis()
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	api, err := startProcess("API", ioAPIEnv+"="+maxLife.String())
	if err != nil {
		return nil, err
	}
	defer api.stop()
	for k, v := range map[string]string{redisEnv: srv.addr, ioAPIURLEnv: api.url} { // the contestants' processes inherit them
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	seeder := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer seeder.Close()

	servers := map[string]*ioServer{}
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	for _, name := range cfg.contestants {
		s, err := startIOServer(name, maxLife)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		servers[name] = s
	}
	for r := range cfg.rounds {
		start := time.Now()
		for _, mode := range cfg.modes {
			for _, name := range rotate(cfg.contestants, r) {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if err := seedRedis(ctx, seeder, cfg.seed); err != nil {
					return nil, fmt.Errorf("seeding Redis: %w", err)
				}
				res := ioLoad(ctx, servers[name].url, mode, cfg.vus, cfg.warmup, cfg.duration)
				k := ioCellKey{mode, name}
				rep.cells[k] = append(rep.cells[k], res)
			}
		}
		fmt.Fprintf(log, "I/O workload round %d/%d done in %s\n", r+1, cfg.rounds, time.Since(start).Round(time.Millisecond))
	}
	rep.finished = time.Now()
	return rep, nil
}

// medianOf is the median of f over rs.
func medianOf(rs []ioResult, f func(ioResult) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return median(xs)
}

func (r *ioReport) write(w io.Writer) {
	cfg := r.cfg
	fmt.Fprintf(w, "## I/O workload (TM Dev Lab v2's tools): mcpmw vs. go-sdk and mcp-go\n\n")
	fmt.Fprintf(w, "Measured %s on %s/%s, nproc %d (GOMAXPROCS %d), %s; %s; redis-server and the catalogue API on the same machine.  \n",
		r.started.UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, nproc(), runtime.GOMAXPROCS(0), runtime.Version(), peerVersions())
	fmt.Fprintf(w, "Command: `%s` (took %s).  \n", strings.TrimSpace(cfg.command), r.finished.Sub(r.started).Round(time.Second))
	fmt.Fprintf(w, "%d virtual users, each looping over the three tool calls and a tools/list with %s of think time; medians of %d round(s) of %s measured after %s of warm-up, contestants interleaved.\n\n",
		cfg.vus, thinkTime, cfg.rounds, cfg.duration, cfg.warmup)
	fmt.Fprintf(w, "| mode | contestant | MCP req/s | tool calls/s | × ours | avg | p50 | p99 | errors |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, mode := range cfg.modes {
		base := r.cells[ioCellKey{mode, "ours"}]
		for _, name := range cfg.contestants {
			rs := r.cells[ioCellKey{mode, name}]
			if len(rs) == 0 {
				continue
			}
			ratio := "–"
			if len(base) == len(rs) {
				var xs []float64
				for i := range rs {
					if b := base[i].callsPerSec(); b > 0 {
						xs = append(xs, rs[i].callsPerSec()/b)
					}
				}
				if len(xs) > 0 {
					ratio = fmtRatio(median(xs))
				}
			}
			errs := 0
			for _, res := range rs {
				errs += res.errors
			}
			ms := func(f func(ioResult) time.Duration) string {
				return fmtNs(medianOf(rs, func(x ioResult) float64 { return float64(f(x)) }))
			}
			fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %s | %s | %s | %s | %d |\n", mode, ioContestantTitle(name),
				medianOf(rs, ioResult.mcpPerSec), medianOf(rs, ioResult.callsPerSec), ratio,
				ms(func(x ioResult) time.Duration { return x.avg }), ms(func(x ioResult) time.Duration { return x.p50 }),
				ms(func(x ioResult) time.Duration { return x.p99 }), errs)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- MCP req/s counts what the published k6 script counts: initializes (legacy only), tool calls and tools/lists, not the notifications; on 2026-07-28 there is no initialize, so compare tool calls/s across modes. × ours: the median over rounds of the ratio of tool calls/s to ours's in the same mode and round.\n")
	fmt.Fprintf(w, "- avg, p50, p99: the tool calls' latency as the client saw it (the published figure is the average).\n")
	if slices.Contains(cfg.modes, modeLegacy) {
		var got []string
		for _, name := range cfg.contestants {
			if rs := r.cells[ioCellKey{modeLegacy, name}]; len(rs) > 0 && rs[0].negotiated != "" {
				got = append(got, name+" "+rs[0].negotiated)
			}
		}
		fmt.Fprintf(w, "- legacy: initialize asks for %s; the version each answered, which the session's requests then carry in MCP-Protocol-Version: %s.\n", legacyVersionSent, strings.Join(got, ", "))
	}
	for k, rs := range r.cells {
		for _, res := range rs {
			if res.errors > 0 {
				fmt.Fprintf(w, "- FAILED: %s, %s: %d error(s), the first: %s\n", k.mode, k.contestant, res.errors, res.firstError)
				break
			}
		}
	}
}

// ioMain parses the I/O workload's flags (the -io* ones, already parsed
// into their variables) and runs it.
func ioMain(ctx context.Context, vus, rounds int, duration, warmup time.Duration, modes, contestants, seed string) int {
	cfg := ioConfig{vus: vus, rounds: rounds, duration: duration, warmup: warmup, command: "cd bench && go run . " + strings.Join(os.Args[1:], " ")}
	var err error
	if cfg.modes, err = parseIOModes(modes); err == nil {
		cfg.contestants, err = parseIOContestants(contestants)
	}
	if err == nil {
		cfg.seed, err = parseSeed(seed)
	}
	if err == nil && (vus < 1 || rounds < 1 || duration <= 0 || warmup < 0) {
		err = errors.New("-iovus and -iorounds must be at least 1, -ioduration positive")
	}
	if err != nil {
		fatal(err)
	}
	rep, err := runIO(ctx, cfg, os.Stderr)
	if err != nil {
		fatal(err)
	}
	rep.write(os.Stdout)
	if rep.failed() {
		return 1
	}
	return 0
}

func parseIOModes(list string) ([]ioMode, error) {
	var out []ioMode
	for m := range strings.SplitSeq(list, ",") {
		if m = strings.TrimSpace(m); m == "" {
			continue
		}
		if !slices.Contains(ioModes, ioMode(m)) {
			return nil, fmt.Errorf("-iomodes: unknown mode %q (have 2026, legacy)", m)
		}
		out = append(out, ioMode(m))
	}
	if len(out) == 0 {
		return nil, errors.New("-iomodes: no mode")
	}
	return out, nil
}

func parseIOContestants(list string) ([]string, error) {
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if !slices.Contains(ioContestantNames, name) {
			return nil, fmt.Errorf("-iocontestants: unknown contestant %q (have %s)", name, strings.Join(ioContestantNames, ", "))
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, errors.New("-iocontestants: no contestant")
	}
	return out, nil
}

func parseSeed(s string) (seedSize, error) {
	switch s {
	case "full":
		return fullSeed, nil
	case "small":
		return smallSeed, nil
	}
	return seedSize{}, fmt.Errorf("-ioseed %q: want full or small", s)
}
