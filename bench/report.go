package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

type cellKey struct{ scenario, contestant string }

type loadKey struct {
	scenario   string
	conc       int
	contestant string
}

// report collects every round's figures and prints the Markdown tables.
type report struct {
	cfg        config
	started    time.Time
	finished   time.Time
	cells      map[cellKey][]cellResult
	goroutines map[cellKey]float64
	loads      map[loadKey][]loadResult
	overhead   cellResult

	otherFailures []string // failures outside the measured cells
	notes         []string // figures outside the tables, one line each
}

func newReport(cfg config) *report {
	return &report{
		cfg:        cfg,
		started:    time.Now(),
		cells:      map[cellKey][]cellResult{},
		goroutines: map[cellKey]float64{},
		loads:      map[loadKey][]loadResult{},
	}
}

func (r *report) addCell(sc *scenario, name string, res cellResult) {
	k := cellKey{sc.name, name}
	r.cells[k] = append(r.cells[k], res)
}

func (r *report) addLoad(sc *scenario, conc int, name string, res loadResult) {
	k := loadKey{sc.name, conc, name}
	r.loads[k] = append(r.loads[k], res)
}

// failed reports whether any answer anywhere was wrong.
func (r *report) failed() bool {
	if len(r.otherFailures) > 0 {
		return true
	}
	for _, rs := range r.cells {
		for _, c := range rs {
			if c.errors > 0 {
				return true
			}
		}
	}
	for _, rs := range r.loads {
		for _, l := range rs {
			if l.errors > 0 {
				return true
			}
		}
	}
	return false
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// quantile returns the q-quantile of xs, interpolating between neighbours.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// cellStats are the medians of one in-process cell, and of its per-round
// ratios to the floor.
type cellStats struct {
	ok                   bool
	errors               int
	firstError           string
	ns, bytes, allocs    float64
	rNs, rBytes, rAllocs float64 // medians of the per-round ratios
	nsP25, nsP75         float64
}

func (r *report) inStats(scName, name string) cellStats {
	rs, fl := r.cells[cellKey{scName, name}], r.cells[cellKey{scName, "floor"}]
	var st cellStats
	var ns, by, al, rn, rb, ra []float64
	for i, c := range rs {
		if c.errors > 0 {
			st.errors += c.errors
			if st.firstError == "" {
				st.firstError = c.firstError
			}
			continue
		}
		ns, by, al = append(ns, c.nsPerOp), append(by, c.bytesPerOp), append(al, c.allocsPerOp)
		if i < len(fl) && fl[i].errors == 0 && fl[i].nsPerOp > 0 {
			f := fl[i]
			rn = append(rn, c.nsPerOp/f.nsPerOp)
			if f.bytesPerOp > 0 {
				rb = append(rb, c.bytesPerOp/f.bytesPerOp)
			}
			if f.allocsPerOp > 0 {
				ra = append(ra, c.allocsPerOp/f.allocsPerOp)
			}
		}
	}
	if st.errors > 0 || len(ns) == 0 {
		return st
	}
	st.ok = true
	st.ns, st.bytes, st.allocs = median(ns), median(by), median(al)
	st.rNs, st.rBytes, st.rAllocs = median(rn), median(rb), median(ra)
	st.nsP25, st.nsP75 = quantile(ns, 0.25), quantile(ns, 0.75)
	return st
}

type loadStats struct {
	ok               bool
	errors           int
	firstError       string
	rps              float64
	p50, p99         float64 // nanoseconds
	rRps, rP50, rP99 float64 // medians of the per-round ratios
}

func (r *report) loopStats(scName string, conc int, name string) loadStats {
	rs, fl := r.loads[loadKey{scName, conc, name}], r.loads[loadKey{scName, conc, "floor"}]
	var st loadStats
	var rps, p50, p99, rr, r5, r9 []float64
	for i, l := range rs {
		st.errors += l.errors
		if l.errors > 0 && st.firstError == "" {
			st.firstError = l.firstError
		}
		if l.requests == 0 {
			continue
		}
		rps, p50, p99 = append(rps, l.reqPerSec), append(p50, float64(l.p50)), append(p99, float64(l.p99))
		if i < len(fl) && fl[i].requests > 0 {
			f := fl[i]
			rr = append(rr, l.reqPerSec/f.reqPerSec)
			r5 = append(r5, float64(l.p50)/float64(f.p50))
			r9 = append(r9, float64(l.p99)/float64(f.p99))
		}
	}
	if len(rps) == 0 {
		return st
	}
	st.ok = true
	st.rps, st.p50, st.p99 = median(rps), median(p50), median(p99)
	st.rRps, st.rP50, st.rP99 = median(rr), median(r5), median(r9)
	return st
}

// sig3 formats v with about three significant digits and no exponent.
func sig3(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 1e9:
		return sig3(ns/1e9) + " s"
	case ns >= 1e6:
		return sig3(ns/1e6) + " ms"
	case ns >= 1e3:
		return sig3(ns/1e3) + " µs"
	default:
		return fmt.Sprintf("%.0f ns", ns)
	}
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1000<<10:
		return sig3(b/(1<<20)) + " MiB"
	case b >= 1000:
		return sig3(b/(1<<10)) + " KiB"
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}

func fmtCount(n float64) string {
	if n >= 100 || n == float64(int64(n)) {
		return fmt.Sprintf("%.0f", n)
	}
	return fmt.Sprintf("%.1f", n)
}

func fmtRatio(x float64) string {
	if x == 0 {
		return "–"
	}
	return sig3(x) + "x"
}

// module versions of the peers, from the build information.
func peerVersions() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var parts []string
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/modelcontextprotocol/go-sdk", "github.com/mark3labs/mcp-go":
			parts = append(parts, d.Path+" "+d.Version)
		}
	}
	return strings.Join(parts, ", ")
}

func nproc() int {
	// runtime.NumCPU is the CPUs this process may use, which is what nproc prints.
	return runtime.NumCPU()
}

func (r *report) write(w io.Writer) {
	fmt.Fprintf(w, "## MCP endpoint benchmark: mcpmw vs. the floor, go-sdk and mcp-go\n\n")
	fmt.Fprintf(w, "Measured %s on %s/%s, nproc %d (GOMAXPROCS %d), %s; %s.  \n",
		r.started.UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, nproc(), runtime.GOMAXPROCS(0), runtime.Version(), peerVersions())
	fmt.Fprintf(w, "Command: `%s` (took %s).\n\n", strings.TrimSpace(r.cfg.command), r.finished.Sub(r.started).Round(time.Second))

	if r.cfg.inprocess {
		r.writeInProcess(w)
	}
	if r.cfg.loopback {
		r.writeLoopback(w)
	}
	if len(r.notes) > 0 {
		fmt.Fprintf(w, "### Notes\n\n- %s\n\n", strings.Join(r.notes, "\n- "))
	}
	r.writeFailures(w)
}

func (r *report) writeInProcess(w io.Writer) {
	fmt.Fprintf(w, "### In-process: `ServeHTTP`, medians of %d interleaved rounds of %s per cell\n\n", r.cfg.rounds, r.cfg.benchtime)
	fmt.Fprintln(w, "| scenario | contestant | time/op | × floor | B/op | × floor | allocs/op | × floor | goroutines/req |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, sc := range r.cfg.scenarios {
		for _, name := range r.cfg.contestants {
			if !supports(name, sc) {
				continue
			}
			st := r.inStats(sc.name, name)
			g := "n/a"
			if v, ok := r.goroutines[cellKey{sc.name, name}]; ok && v >= 0 {
				g = fmtCount(v)
			}
			if !st.ok {
				fmt.Fprintf(w, "| %s | %s | **error** (%d) | | | | | | %s |\n", sc.title, name, st.errors, g)
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sc.title, name,
				fmtNs(st.ns), fmtRatio(st.rNs), fmtBytes(st.bytes), fmtRatio(st.rBytes), fmtCount(st.allocs), fmtRatio(st.rAllocs), g)
		}
	}
	fmt.Fprintln(w)

	var hooks []string
	for _, sc := range r.cfg.scenarios {
		h, o := r.cells[cellKey{sc.name, "ours+hooks"}], r.cells[cellKey{sc.name, "ours"}]
		var ratios []float64
		for i := range min(len(h), len(o)) {
			if h[i].errors == 0 && o[i].errors == 0 && o[i].nsPerOp > 0 {
				ratios = append(ratios, h[i].nsPerOp/o[i].nsPerOp)
			}
		}
		if len(ratios) > 0 {
			hooks = append(hooks, fmt.Sprintf("%s %s", sc.name, fmtRatio(median(ratios))))
		}
	}
	if len(hooks) > 0 {
		fmt.Fprintf(w, "- ours+hooks ÷ ours, time (median of per-round ratios): %s.\n", strings.Join(hooks, ", "))
	}
	if tasks := r.taskRatios(); len(tasks) > 0 {
		fmt.Fprintf(w, "- Tasks ÷ tools/call echo 50 B (call50) of the same contestant, time (median of per-round ratios): %s.\n", strings.Join(tasks, "; "))
	}
	if ratio, ok := r.ratioOf("skills100", "list100", "ours"); ok {
		fmt.Fprintf(w, "- skills/list of 100 skills ÷ tools/list of 100 tools (skills100 ÷ list100), ours, time (median of per-round ratios): %s.\n", fmtRatio(ratio))
	}
	if skipped := r.skipped(); len(skipped) > 0 {
		fmt.Fprintf(w, "- Only %s serve the task scenarios, and only ours the Skills one (the floor and the peers have neither extension), so this run leaves out %s; their × floor is blank, with no floor to compare with.\n", strings.Join(taskContestants, " and "), strings.Join(skipped, "; "))
	}
	var spread []string
	for _, name := range r.cfg.contestants {
		var worst float64
		for _, sc := range r.cfg.scenarios {
			if st := r.inStats(sc.name, name); st.ok && st.ns > 0 {
				worst = max(worst, (st.nsP75-st.nsP25)/st.ns)
			}
		}
		spread = append(spread, fmt.Sprintf("%s %.0f%%", name, 100*worst))
	}
	fmt.Fprintf(w, "- Noise: the largest interquartile range of time/op across rounds, relative to the median, per contestant: %s.\n", strings.Join(spread, ", "))
	o := r.overhead
	fmt.Fprintf(w, "- Included in every figure, the floor's too: the harness's own cost per request (a fresh `http.Request` copied from a template, a body reader, a reused writer): %s, %s, %s alloc(s).\n",
		fmtNs(o.nsPerOp), fmtBytes(o.bytesPerOp), fmtCount(o.allocsPerOp))
	fmt.Fprintln(w, "- × floor: the median over rounds of the ratio to the floor measured in the same round.")
	fmt.Fprintln(w, "- goroutines/req: goroutines the runtime created while serving sequential requests (`/sched/goroutines-created`), divided by the number of requests.")
	fmt.Fprintln(w, "- Every response is checked: the first fully (HTTP 200, JSON content type, JSON-RPC result for our id, the echoed text, every tool on one page, the input_required result asking to confirm, the resource's URI, MIME type and whole text, the prompt's one user text message, the task created (resultType task, status working, the harness's TTL), or the completed task with the echoed text as its result), the rest against its fingerprint (status, length, 18 byte windows; for a task created, less the bytes of its id and times).")
	if slices.ContainsFunc(r.cfg.scenarios, (*scenario).ownHandler) {
		fmt.Fprintln(w, "- taskcreate: each cell has a handler of its own with an empty store, closed after the cell once its tasks have ended; the tasks run on in the background while later requests are measured, and their allocations count in allocs/op and B/op (goroutines/req counts each task's run and its lease's).")
	}
	fmt.Fprintln(w)
}

// taskRatios are, for each contestant measured on call50 and a task
// scenario, the median over rounds of the task scenario's time ÷ call50's
// in the same round: "ours taskget 1.20x, taskcreate 2.00x".
func (r *report) taskRatios() []string {
	var out []string
	for _, name := range r.cfg.contestants {
		calls := r.cells[cellKey{"call50", name}]
		var parts []string
		for _, sc := range r.cfg.scenarios {
			if !sc.tasks {
				continue
			}
			tasks := r.cells[cellKey{sc.name, name}]
			var ratios []float64
			for i := range min(len(tasks), len(calls)) {
				if tasks[i].errors == 0 && calls[i].errors == 0 && calls[i].nsPerOp > 0 {
					ratios = append(ratios, tasks[i].nsPerOp/calls[i].nsPerOp)
				}
			}
			if len(ratios) > 0 {
				parts = append(parts, sc.name+" "+fmtRatio(median(ratios)))
			}
		}
		if len(parts) > 0 {
			out = append(out, name+" "+strings.Join(parts, ", "))
		}
	}
	return out
}

// ratioOf is the median over rounds of the time of scenario a ÷ that of
// scenario b, both served by the contestant name in the same round.
func (r *report) ratioOf(a, b, name string) (float64, bool) {
	as, bs := r.cells[cellKey{a, name}], r.cells[cellKey{b, name}]
	var ratios []float64
	for i := range min(len(as), len(bs)) {
		if as[i].errors == 0 && bs[i].errors == 0 && bs[i].nsPerOp > 0 {
			ratios = append(ratios, as[i].nsPerOp/bs[i].nsPerOp)
		}
	}
	if len(ratios) == 0 {
		return 0, false
	}
	return median(ratios), true
}

// skipped names, per in-process scenario, the contestants of the run that
// do not serve it.
func (r *report) skipped() []string {
	var out []string
	for _, sc := range r.cfg.scenarios {
		var names []string
		for _, name := range r.cfg.contestants {
			if !supports(name, sc) {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			out = append(out, sc.name+" for "+strings.Join(names, ", "))
		}
	}
	return out
}

func (r *report) writeLoopback(w io.Writer) {
	for _, sc := range r.cfg.loopScenarios {
		fmt.Fprintf(w, "### Loopback: %s, one process per contestant on 127.0.0.1, keep-alive clients; medians of %d round(s) of %s (after %s warm-up)\n\n",
			sc.title, r.cfg.loopRounds, r.cfg.duration, r.cfg.warmup)
		fmt.Fprintln(w, "| clients | contestant | req/s | × floor | p50 | × floor | p99 | × floor | errors |")
		fmt.Fprintln(w, "|--:|---|--:|--:|--:|--:|--:|--:|--:|")
		for _, conc := range r.cfg.conc {
			for _, name := range r.cfg.contestants {
				if !supports(name, sc) {
					continue
				}
				st := r.loopStats(sc.name, conc, name)
				if !st.ok {
					fmt.Fprintf(w, "| %d | %s | **error** | | | | | | %d |\n", conc, name, st.errors)
					continue
				}
				fmt.Fprintf(w, "| %d | %s | %.0f | %s | %s | %s | %s | %s | %d |\n", conc, name,
					st.rps, fmtRatio(st.rRps), fmtNs(st.p50), fmtRatio(st.rP50), fmtNs(st.p99), fmtRatio(st.rP99), st.errors)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "- req/s counts valid answers to requests that started after the warm-up and ended before the deadline; p50 and p99 are their latencies as the client saw them. × floor: the median over rounds of the ratio to the floor in the same round.")
	fmt.Fprintln(w, "- The load generator shares the machine with the server under test; every contestant pays the same client cost.")
	fmt.Fprintln(w)
}

func (r *report) writeFailures(w io.Writer) {
	lines := append([]string(nil), r.otherFailures...)
	for _, sc := range r.cfg.scenarios {
		for _, name := range r.cfg.contestants {
			if st := r.inStats(sc.name, name); st.errors > 0 {
				lines = append(lines, fmt.Sprintf("- in-process %s, %s: %d failed answer(s); first: %s", sc.name, name, st.errors, st.firstError))
			}
		}
	}
	for _, sc := range r.cfg.loopScenarios {
		for _, conc := range r.cfg.conc {
			for _, name := range r.cfg.contestants {
				if st := r.loopStats(sc.name, conc, name); st.errors > 0 {
					lines = append(lines, fmt.Sprintf("- loopback %s ×%d, %s: %d failed answer(s); first: %s", sc.name, conc, name, st.errors, st.firstError))
				}
			}
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "### Failures\n\n%s\n\n", strings.Join(lines, "\n"))
	}
}
