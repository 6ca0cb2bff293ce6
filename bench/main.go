// Command bench measures mcpmw side by side with a bare net/http JSON handler
// (the floor), the official Go SDK and mcp-go, and prints a Markdown table.
//
//	cd bench && go run . -quick        # under a minute
//	cd bench && go run . -rounds 10    # what docs/performance.md shows
//	cd bench && go run . -scenarios ask,read1k,prompt -loopback=false   # the opt-in scenarios
//	cd bench && go run . -contestants ours+hooks,ours+redis -scenarios call50 -inprocess=false -conc 64   # the Redis limiter beside the in-memory one
//	cd bench && go run . -contestants ours,ours+redistasks -scenarios call50,taskget,taskcreate -loopscenarios taskget -conc 16   # tasks, in memory and in Redis
//	cd bench && go run . -contestants ours -scenarios list100,skills100 -loopback=false   # skills/list beside tools/list, 100 each
//	cd bench && go run . -contestants ours -scenarios list1000 -loopback=false \
//		-cpuprofile cpu.out -memprofile mem.out   # profile (the floor always runs too)
//	cd bench && go run . -io                   # the I/O workload, about 3 minutes
//	cd bench && go run . -io -ioduration 5m -iowarmup 60s   # the I/O workload as published (about an hour)
//
// With -io, the harness runs the I/O workload instead (iorun.go): the
// tools of the TM Dev Lab v2 MCP server benchmark, each call doing real
// I/O against a redis-server and a local HTTP API the harness starts, under
// 50 virtual users, served by ours (2026-07-28 and legacy, alone and as 1
// and 3 instances behind a round-robin proxy), go-sdk and mcp-go.
//
// In-process, each contestant's ServeHTTP runs under testing.Benchmark, the
// contestants interleaved round by round (A B C D, B C D A, …) because the
// machine is shared and noisy; the table shows medians over the rounds and,
// for ratios, the median of each round's ratio to the floor. Loopback, each
// contestant runs in its own process (this binary re-executed) and a load
// generator in this process drives it with keep-alive clients.
// Every answer is validated; a wrong or failed answer is an error, never
// speed.
//
// # Method
//
// The floor is a net/http handler that decodes the request into a fixed Go
// struct with encoding/json and writes a canned reply cut from ours's own
// answer (so the same shape and size): for tools/list the pre-encoded list,
// for tools/call the bytes around the echoed text, which it encodes with
// encoding/json, for the ask scenario's confirm call the whole
// input_required result, for the read1k scenario's resources/read (once
// it has checked the URI) the whole result, and for the prompt scenario's
// prompts/get the bytes around the message's text, which it fills in with
// the topic and encodes with encoding/json. ours runs bare
// (allow-all authenticator, no-op auditor) and as ours+hooks (bearer-token
// check, mcpmw.LogAuditor writing JSON lines, ratelimit.PerIP with a limit
// never reached), as ours+redis (opt-in: ours+hooks with the Redis limiter,
// mcpredis.PerIP failing closed, against a redis-server the harness starts
// on this machine, whose round trips per request it counts), and as ours+typed (bare, with echo built by
// typed.NewTool: its arguments validated against the derived schema, then
// decoded into a struct). The task scenarios (opt-in) are served by ours
// only: taskget, a tasks/get of a task created during setup and completed
// before it is measured, and taskcreate, a tools/call of echo (then a
// TaskOptional tool) that becomes a task and is answered once the task is
// stored; ours keeps its tasks in memory, ours+redistasks (opt-in, the bare
// ours with mcpredis.NewTaskStore, against the same redis-server) in
// Redis, whose commands per request it counts, on the request's path and
// after it. gosdk is mcp.NewStreamableHTTPHandler with
// Stateless and JSONResponse; mcpgo is server.NewStreamableHTTPServer with
// WithStateLess(true). Every contestant but the floor refuses a Host header
// that is not a loopback name (ours with Options.CheckHost, the peers by
// default) and a body over 4 MiB (everyone's default), as guards_test.go
// checks. Peers register tools through their raw-schema APIs
// (no reflection, no per-call schema validation), and everyone's page size
// exceeds the largest list.
//
// In-process, a request is a copy of a template request with its own body
// reader (one allocation, reported in the output and included in every
// figure, the floor's too); the ResponseWriter is reused, so it allocates
// nothing. The first answer of each cell is validated fully, every later one
// against that answer's fingerprint (for taskcreate, whose answers differ
// in the task's id and times, less those bytes). A taskcreate cell gets a
// handler of its own, closed once its tasks have ended, so that no cell
// measures a store that earlier cells filled. Goroutines per request come from the
// runtime's /sched/goroutines-created counter around sequential requests.
//
// Loopback, each contestant is this binary re-executed with MCPMW_BENCH_SERVE
// set; it exits when its stdin closes, and the harness kills it if it does
// not. The load generator uses one http.Transport per measurement with
// MaxIdleConnsPerHost at twice the concurrency, warms up, then counts only
// requests that start after the warm-up and end before the deadline.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type config struct {
	rounds, loopRounds int
	benchtime          time.Duration
	duration, warmup   time.Duration
	conc               []int
	scenarios          []*scenario
	loopScenarios      []*scenario
	contestants        []string
	goroutineSamples   int
	inprocess          bool
	loopback           bool
	cpuprofile         string
	memprofile         string
	command            string
}

func main() {
	if childMain() {
		return
	}
	testing.Init() // registers -test.benchtime, which testing.Benchmark reads
	var (
		quick         = flag.Bool("quick", false, "a smoke run: 3 rounds of 50ms, 1 loopback round of 1s (finishes in under a minute)")
		rounds        = flag.Int("rounds", 10, "in-process rounds (each runs every contestant on every scenario once)")
		benchtime     = flag.Duration("benchtime", 300*time.Millisecond, "in-process time per contestant, scenario and round")
		loopRounds    = flag.Int("looprounds", 3, "loopback rounds")
		duration      = flag.Duration("duration", 3*time.Second, "loopback measured time per contestant, concurrency and round")
		warmup        = flag.Duration("warmup", 500*time.Millisecond, "loopback warm-up before each measurement (not counted)")
		concFlag      = flag.String("conc", "16,64", "loopback concurrencies (keep-alive clients)")
		scenarioFlag  = flag.String("scenarios", "call50,list1,list100,list1000,call100k", "in-process scenarios (also: ask, read1k, prompt, taskget, taskcreate, skills100; left out of the default to keep a full run near 3.5 minutes)")
		loopFlag      = flag.String("loopscenarios", "call50", "loopback scenarios (any but taskcreate)")
		contFlag      = flag.String("contestants", strings.Join(defaultContestants(), ","), "contestants (floor is always measured: ratios need it); ours+redis and ours+redistasks, opt-in, need redis-server")
		callTools     = flag.Int("calltools", 100, "tools registered for the tools/call scenarios (echo plus dummies)")
		goroutineReqs = flag.Int("goroutine-requests", 100, "requests sent to count goroutines created per request")
		inprocess     = flag.Bool("inprocess", true, "run the in-process benchmarks")
		loopback      = flag.Bool("loopback", true, "run the loopback benchmarks")
		cpuprofile    = flag.String("cpuprofile", "", "write a CPU profile of the in-process phase to `file`")
		memprofile    = flag.String("memprofile", "", "write an allocation profile of the in-process phase to `file`")
		memrate       = flag.Int("memprofilerate", 0, "runtime.MemProfileRate while profiling (0: the runtime's default)")
		serveName     = flag.String("serve", "", "only serve this contestant on a free port of 127.0.0.1 until stdin closes (for poking at it by hand)")
		serveTools    = flag.Int("tools", 100, "with -serve, the number of tools")
		serveAsk      = flag.Bool("ask", false, "with -serve, also serve confirm, the ask scenario's tool")
		serveResource = flag.Bool("resource", false, "with -serve, also serve the read1k scenario's resource")
		servePrompt   = flag.Bool("prompt", false, "with -serve, also serve the prompt scenario's prompt")
		serveTasks    = flag.Bool("tasks", false, "with -serve, serve echo as a tool that may become a task (the task scenarios' setup)")

		ioRun         = flag.Bool("io", false, "run the I/O workload (TM Dev Lab v2's tools over a redis-server and a local API) instead of the phases above")
		ioVUs         = flag.Int("iovus", 50, "with -io, virtual users")
		ioDuration    = flag.Duration("ioduration", 10*time.Second, "with -io, measured time per contestant, mode and round (the published figure: 5m)")
		ioWarmup      = flag.Duration("iowarmup", 3*time.Second, "with -io, warm-up before each measurement, not counted (the published figure: 60s)")
		ioRounds      = flag.Int("iorounds", 1, "with -io, rounds")
		ioModesFlag   = flag.String("iomodes", "2026,legacy", "with -io, how the client speaks: 2026 (2026-07-28, stateless), legacy (initialize, notifications/initialized, then the request)")
		ioContestants = flag.String("iocontestants", strings.Join(ioContestantNames, ","), "with -io, contestants")
		ioSeed        = flag.String("ioseed", "full", "with -io, Redis's data: full (the published set: 10k carts, 1k histories, 100k popular products) or small")
	)
	flag.Parse()
	if *ioRun {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := ioMain(ctx, *ioVUs, *ioRounds, *ioDuration, *ioWarmup, *ioModesFlag, *ioContestants, *ioSeed)
		stop()
		os.Exit(code)
	}
	if *serveName != "" {
		if err := serve(*serveName, setup{tools: *serveTools, ask: *serveAsk, resource: *serveResource, prompt: *servePrompt, tasks: *serveTasks}, os.Stdin, os.Stdout, 24*time.Hour); err != nil {
			fmt.Fprintln(os.Stderr, "bench -serve:", err)
			os.Exit(1)
		}
		return
	}

	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		for name, v := range map[string]string{"rounds": "3", "benchtime": "50ms", "looprounds": "1", "duration": "1s", "warmup": "250ms", "goroutine-requests": "20"} {
			if !set[name] {
				_ = flag.Set(name, v)
			}
		}
	}
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		fatal(err)
	}

	cfg := config{
		rounds: *rounds, loopRounds: *loopRounds, benchtime: *benchtime,
		duration: *duration, warmup: *warmup, goroutineSamples: *goroutineReqs,
		inprocess: *inprocess, loopback: *loopback,
		cpuprofile: *cpuprofile, memprofile: *memprofile,
		command: "cd bench && go run . " + strings.Join(os.Args[1:], " "),
	}
	var err error
	if cfg.conc, err = parseInts(*concFlag); err != nil {
		fatal(fmt.Errorf("-conc: %w", err))
	}
	all := allScenarios(*callTools)
	if cfg.scenarios, err = pickScenarios(all, *scenarioFlag); err != nil {
		fatal(fmt.Errorf("-scenarios: %w", err))
	}
	if cfg.loopScenarios, err = pickLoopScenarios(all, *loopFlag); err != nil {
		fatal(fmt.Errorf("-loopscenarios: %w", err))
	}
	if cfg.contestants, err = pickContestants(*contFlag); err != nil {
		fatal(fmt.Errorf("-contestants: %w", err))
	}
	if cfg.rounds < 1 || cfg.loopRounds < 1 {
		fatal(fmt.Errorf("-rounds and -looprounds must be at least 1"))
	}
	if *memrate > 0 {
		runtime.MemProfileRate = *memrate
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fatal(err)
	}
	rep.write(os.Stdout)
	if rep.failed() {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(2)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func pickScenarios(all []*scenario, list string) ([]*scenario, error) {
	var out []*scenario
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		found := false
		for _, sc := range all {
			if sc.name == name {
				out, found = append(out, sc), true
			}
		}
		if !found {
			var names []string
			for _, sc := range all {
				names = append(names, sc.name)
			}
			return nil, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// pickLoopScenarios is pickScenarios for the loopback phase, which refuses
// the scenarios whose requests leave state behind (ownHandler): a loopback
// child serves for the whole phase, and would pile it up.
func pickLoopScenarios(all []*scenario, list string) ([]*scenario, error) {
	out, err := pickScenarios(all, list)
	for _, sc := range out {
		if err == nil && sc.ownHandler() {
			err = fmt.Errorf("%s runs in-process only: each request leaves a task in the contestant's store, which a loopback child keeps for the whole phase", sc.name)
		}
	}
	return out, err
}

func pickContestants(list string) ([]string, error) {
	want := map[string]bool{"floor": true}
	for _, name := range strings.Split(list, ",") {
		if name = strings.TrimSpace(name); name != "" {
			want[name] = true
		}
	}
	var out []string
	for _, name := range contestantNames {
		if want[name] {
			out = append(out, name)
			delete(want, name)
		}
	}
	for name := range want {
		return nil, fmt.Errorf("unknown contestant %q (have %s)", name, strings.Join(contestantNames, ", "))
	}
	return out, nil
}

// rotate returns names starting at position r, wrapping around: round r's
// order, so that no contestant always runs right after the same one.
func rotate(names []string, r int) []string {
	r %= len(names)
	return append(append([]string(nil), names[r:]...), names[:r]...)
}

// run performs the measurements and returns the report; progress goes to log.
func run(ctx context.Context, cfg config, log io.Writer) (*report, error) {
	rep := newReport(cfg)
	if slices.ContainsFunc(cfg.contestants, func(name string) bool { return slices.Contains(optInContestants, name) }) {
		srv, err := startRedis()
		if err != nil {
			return nil, err
		}
		defer srv.stop()
		if err := os.Setenv(redisEnv, srv.addr); err != nil { // the loopback children inherit it
			return nil, err
		}
		defer rep.addRedisRoundTrips(srv)
	}
	if cfg.inprocess {
		if err := runInProcess(ctx, cfg, rep, log); err != nil {
			return nil, err
		}
	}
	if cfg.loopback && ctx.Err() == nil {
		if err := runLoopback(ctx, cfg, rep, log); err != nil {
			return nil, err
		}
	}
	rep.finished = time.Now()
	return rep, nil
}

type handlerKey struct {
	name  string
	setup setup
}

func runInProcess(ctx context.Context, cfg config, rep *report, log io.Writer) error {
	pool := newHandlerPool()
	defer pool.close()
	// Build every handler before measuring, so construction garbage and
	// one-off initialisation are out of the way (and a contestant that
	// cannot be built fails the run at once).
	for _, sc := range cfg.scenarios {
		for _, name := range cfg.contestants {
			if !supports(name, sc) {
				continue
			}
			h, _, err := pool.open(name, sc)
			if err != nil {
				return err
			}
			if sc.ownHandler() {
				closeHandler(h)
			}
		}
	}
	sc0 := cfg.scenarios[0]
	rep.overhead = harnessOverhead(sc0)

	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	for r := range cfg.rounds {
		start := time.Now()
		for _, sc := range cfg.scenarios {
			for _, name := range rotate(cfg.contestants, r) {
				if !supports(name, sc) {
					continue
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				h, b, err := pool.open(name, sc)
				if err != nil {
					return err
				}
				var linesBefore int64
				audits := name == "ours+hooks" || name == "ours+redis"
				if audits {
					linesBefore, _ = auditSink.count()
				}
				res := benchCell(h, b)
				if audits && res.errors == 0 {
					lines, _ := auditSink.count()
					if got, want := lines-linesBefore, int64(res.iterations)+1; got != want {
						res.errors, res.firstError = 1, fmt.Sprintf("the auditor wrote %d lines for %d requests", got, want)
					}
				}
				rep.addCell(sc, name, res)
				if r == 0 {
					g, err := goroutinesPerRequest(h, b, cfg.goroutineSamples)
					if err != nil {
						rep.otherFailures = append(rep.otherFailures, fmt.Sprintf("in-process %s, %s: counting goroutines: %v", sc.name, name, err))
						g = -1
					}
					rep.goroutines[cellKey{sc.name, name}] = g
				}
				if sc.ownHandler() {
					closeHandler(h) // waits for the cell's tasks to end
				}
			}
		}
		fmt.Fprintf(log, "in-process round %d/%d done in %s\n", r+1, cfg.rounds, time.Since(start).Round(time.Millisecond))
	}

	if cfg.memprofile != "" {
		runtime.GC()
		f, err := os.Create(cfg.memprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return err
		}
	}
	return nil
}

func runLoopback(ctx context.Context, cfg config, rep *report, log io.Writer) error {
	children := map[handlerKey]*child{}
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	maxLife := time.Duration(cfg.loopRounds*len(cfg.conc)*len(cfg.loopScenarios)*len(cfg.contestants))*(cfg.duration+cfg.warmup+15*time.Second) + time.Minute
	tr := &http.Transport{Proxy: nil}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second} // for bind
	bound := map[cellKey]*scenario{}
	for _, sc := range cfg.loopScenarios {
		for _, name := range cfg.contestants {
			if !supports(name, sc) {
				continue
			}
			k := handlerKey{name, sc.setup()}
			if children[k] == nil {
				c, err := startChild(name, sc.setup(), maxLife)
				if err != nil {
					return err
				}
				children[k] = c
			}
			b, err := bind(sc, overHTTP(client, children[k].url))
			if err != nil {
				return fmt.Errorf("loopback %s: %w", name, err)
			}
			bound[cellKey{sc.name, name}] = b
		}
	}
	for r := range cfg.loopRounds {
		start := time.Now()
		for _, sc := range cfg.loopScenarios {
			for _, conc := range cfg.conc {
				for _, name := range rotate(cfg.contestants, r) {
					if !supports(name, sc) {
						continue
					}
					if ctx.Err() != nil {
						return ctx.Err()
					}
					c := children[handlerKey{name, sc.setup()}]
					res := load(ctx, c.url, bound[cellKey{sc.name, name}], conc, cfg.warmup, cfg.duration)
					rep.addLoad(sc, conc, name, res)
				}
			}
		}
		fmt.Fprintf(log, "loopback round %d/%d done in %s\n", r+1, cfg.loopRounds, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
