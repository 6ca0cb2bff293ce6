package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain lets the test binary be a loopback child too, so that the
// loopback phase can be tested end to end, and keeps testing.Benchmark short.
func TestMain(m *testing.M) {
	if childMain() {
		return
	}
	flag.Parse()
	if err := flag.Set("test.benchtime", "5ms"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// Every contestant answers every scenario it serves correctly, answers it
// the same way twice (so the fingerprint check holds), and can be counted
// for goroutines.
func TestEveryContestantAnswersEveryScenario(t *testing.T) {
	for _, sc := range allScenarios(100) {
		for _, name := range defaultContestants() {
			if !supports(name, sc) {
				continue
			}
			t.Run(sc.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				h, err := newContestant(name, sc.setup())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { closeHandler(h) })
				sc, err := bind(sc, inProcess(h))
				if err != nil {
					t.Fatal(err)
				}
				body := sc.body()
				tmpl := newTemplateRequest(sc, body)
				fp, err := validateOnce(h, sc, tmpl, body)
				if err != nil {
					t.Fatal(err)
				}
				w := newFakeWriter()
				h.ServeHTTP(w, newRequest(tmpl, body))
				if !fp.match(w.status, w.body) {
					t.Fatalf("second answer differs from the first: %d %s", w.status, clip(w.body))
				}
				if _, err := goroutinesPerRequest(h, sc, 2); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// The floor's answers are ours, byte for byte: same shape, same size.
func TestFloorAnswersLikeOurs(t *testing.T) {
	for _, sc := range allScenarios(10) {
		if !supports("floor", sc) {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			answer := func(name string) []byte {
				h, err := newContestant(name, sc.setup())
				if err != nil {
					t.Fatal(err)
				}
				w := newFakeWriter()
				h.ServeHTTP(w, newTemplateRequest(sc, sc.body()))
				if w.status != http.StatusOK {
					t.Fatalf("%s: HTTP %d", name, w.status)
				}
				return w.body
			}
			if floor, ours := answer("floor"), answer("ours"); !bytes.Equal(floor, ours) {
				t.Fatalf("floor and ours differ:\nfloor %s\nours  %s", clip(floor), clip(ours))
			}
		})
	}
}

func TestValidateRefusesWrongAnswers(t *testing.T) {
	call := &scenario{method: "tools/call", tools: 1, msgLen: 5}
	list := &scenario{method: "tools/list", tools: 2}
	good := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"The q"}]}}`
	goodList := `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"echo"},{"name":"tool_0001"}]}}`
	if err := call.validate(200, "application/json", []byte(good)); err != nil {
		t.Fatalf("good answer refused: %v", err)
	}
	if err := list.validate(200, "application/json", []byte(goodList)); err != nil {
		t.Fatalf("good list refused: %v", err)
	}
	for _, tt := range []struct {
		name, body string
		sc         *scenario
		status     int
		ct         string
	}{
		{"status", good, call, 400, "application/json"},
		{"content type", good, call, 200, "text/event-stream"},
		{"not JSON", `{"jsonrpc"`, call, 200, "application/json"},
		{"other id", strings.Replace(good, `"id":7`, `"id":8`, 1), call, 200, "application/json"},
		{"error", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}`, call, 200, "application/json"},
		{"no result", `{"jsonrpc":"2.0","id":7}`, call, 200, "application/json"},
		{"wrong text", strings.Replace(good, "The q", "The r", 1), call, 200, "application/json"},
		{"isError", strings.Replace(good, `]}}`, `],"isError":true}}`, 1), call, 200, "application/json"},
		{"too few tools", `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"echo"}]}}`, list, 200, "application/json"},
		{"duplicate tools", `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"echo"},{"name":"echo"}]}}`, list, 200, "application/json"},
		{"second page", strings.Replace(goodList, `]}}`, `],"nextCursor":"x"}}`, 1), list, 200, "application/json"},
	} {
		if err := tt.sc.validate(tt.status, tt.ct, []byte(tt.body)); err == nil {
			t.Errorf("%s: wrong answer accepted", tt.name)
		}
	}

	ask := scenarioNamed(t, "ask")
	goodAsk := `{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Delete note 3?","requestedSchema":` + confirmForm + `}}}}}`
	if err := ask.validate(200, "application/json", []byte(goodAsk)); err != nil {
		t.Fatalf("good input_required refused: %v", err)
	}
	for _, tt := range []struct{ name, from, to string }{
		{"complete", `"input_required"`, `"complete"`},
		{"other key", `{"confirm":{"method"`, `{"sure":{"method"`},
		{"other method", `"elicitation/create"`, `"sampling/createMessage"`},
		{"url mode", `"mode":"form"`, `"mode":"url"`},
		{"other message", "Delete note 3?", "Delete note 4?"},
		{"other schema", `"type":"boolean"`, `"type":"string"`},
		{"content", `"resultType"`, `"content":[{"type":"text","text":"x"}],"resultType"`},
		{"requestState", `"resultType"`, `"requestState":"abc","resultType"`},
		{"two requests", `"inputRequests":{`, `"inputRequests":{"more":{"method":"roots/list"},`},
	} {
		bad := strings.Replace(goodAsk, tt.from, tt.to, 1)
		if bad == goodAsk {
			t.Fatalf("%s: the replacement changed nothing", tt.name)
		}
		if err := ask.validate(200, "application/json", []byte(bad)); err == nil {
			t.Errorf("ask %s: wrong answer accepted", tt.name)
		}
	}

	read := scenarioNamed(t, "read1k")
	goodRead := `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","contents":[{"uri":"bench://doc/1k","mimeType":"text/plain","text":"` + resourceText + `"}]}}`
	if err := read.validate(200, "application/json", []byte(goodRead)); err != nil {
		t.Fatalf("good resources/read refused: %v", err)
	}
	for _, tt := range []struct{ name, from, to string }{
		{"other uri", `"uri":"bench://doc/1k"`, `"uri":"bench://doc/2k"`},
		{"other mime type", `"text/plain"`, `"text/markdown"`},
		{"no mime type", `"mimeType":"text/plain",`, ``},
		{"short text", `0123456789"}]`, `012345678"}]`},
		{"wrong text", `"text":"The quick`, `"text":"The quack`},
		{"blob", `"text":"`, `"blob":"QUJD","text":"`},
		{"blob only", `"text":"` + resourceText + `"`, `"blob":"QUJD"`},
		{"two items", `"contents":[`, `"contents":[{"uri":"bench://doc/1k","mimeType":"text/plain","text":"x"},`},
		{"no items", `"contents":[{`, `"contents":[],"x":[{`},
		{"input_required", `"complete"`, `"input_required"`},
		{"isError", `"resultType"`, `"isError":true,"resultType"`},
		{"error", `"result":{`, `"error":{"code":-32002,"message":"not found"},"result":{`},
	} {
		bad := strings.Replace(goodRead, tt.from, tt.to, 1)
		if bad == goodRead {
			t.Fatalf("read %s: the replacement changed nothing", tt.name)
		}
		if err := read.validate(200, "application/json", []byte(bad)); err == nil {
			t.Errorf("read %s: wrong answer accepted", tt.name)
		}
	}

	prompt := scenarioNamed(t, "prompt")
	goodPrompt := `{"jsonrpc":"2.0","id":7,"result":{"messages":[{"role":"user","content":{"type":"text","text":"` + promptText(prompt.text()) + `"}}]}}`
	if err := prompt.validate(200, "application/json", []byte(goodPrompt)); err != nil {
		t.Fatalf("good prompts/get refused: %v", err)
	}
	for _, tt := range []struct{ name, from, to string }{
		{"assistant", `"role":"user"`, `"role":"assistant"`},
		{"image", `"type":"text"`, `"type":"image"`},
		{"other topic", "The quick", "The quack"},
		{"unfilled", prompt.text(), "{topic}"},
		{"no text", `,"text":"Summarise`, `,"x":"Summarise`},
		{"two messages", `"messages":[`, `"messages":[{"role":"user","content":{"type":"text","text":"Hi"}},`},
		{"no messages", `"messages":[{`, `"messages":[],"x":[{`},
		{"input_required", `"messages"`, `"resultType":"input_required","messages"`},
		{"error", `"result":{`, `"error":{"code":-32602,"message":"no"},"result":{`},
	} {
		bad := strings.Replace(goodPrompt, tt.from, tt.to, 1)
		if bad == goodPrompt {
			t.Fatalf("prompt %s: the replacement changed nothing", tt.name)
		}
		if err := prompt.validate(200, "application/json", []byte(bad)); err == nil {
			t.Errorf("prompt %s: wrong answer accepted", tt.name)
		}
	}

	fp := newFingerprint([]byte(goodList))
	if !fp.match(200, []byte(goodList)) {
		t.Fatal("fingerprint refuses its own answer")
	}
	for _, bad := range []string{strings.Replace(goodList, "tool_0001", "tool_0002", 1), goodList + " ", goodList[1:]} {
		if fp.match(200, []byte(bad)) {
			t.Errorf("fingerprint accepts %s", bad)
		}
	}
	if fp.match(500, []byte(goodList)) {
		t.Error("fingerprint accepts a 500")
	}
}

// scenarioNamed returns the scenario called name.
func scenarioNamed(t *testing.T, name string) *scenario {
	t.Helper()
	for _, sc := range allScenarios(10) {
		if sc.name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %q", name)
	return nil
}

// flaky answers correctly the first time only.
type flaky struct {
	h     http.Handler
	calls atomic.Int64
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.calls.Add(1) > 1 {
		http.Error(w, "nope", http.StatusServiceUnavailable)
		return
	}
	f.h.ServeHTTP(w, r)
}

func TestBenchCellCountsWrongAnswers(t *testing.T) {
	sc := allScenarios(10)[0]
	h, err := newContestant("ours", sc.setup())
	if err != nil {
		t.Fatal(err)
	}
	if res := benchCell(h, sc); res.errors != 0 || res.iterations == 0 || res.nsPerOp <= 0 {
		t.Fatalf("ours: %+v", res)
	}
	if res := benchCell(&flaky{h: h}, sc); res.errors == 0 {
		t.Fatalf("a handler failing after its first answer got no errors: %+v", res)
	}
}

func TestLoadCountsAnswers(t *testing.T) {
	sc := allScenarios(10)[0]
	h, err := newContestant("ours+hooks", sc.setup())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	res := load(t.Context(), srv.URL, sc, 2, 20*time.Millisecond, 150*time.Millisecond)
	if res.errors != 0 || res.requests == 0 || res.p50 <= 0 || res.p99 < res.p50 {
		t.Fatalf("ours+hooks: %+v", res)
	}

	bad := httptest.NewServer(&flaky{h: h})
	defer bad.Close()
	if res := load(t.Context(), bad.URL, sc, 2, 0, 50*time.Millisecond); res.errors == 0 {
		t.Fatalf("a server failing after its first answer got no errors: %+v", res)
	}
}

// ours+hooks really checks the token and audits every request.
func TestHooksAuthenticateAndAudit(t *testing.T) {
	sc := allScenarios(10)[0]
	h, err := newContestant("ours+hooks", sc.setup())
	if err != nil {
		t.Fatal(err)
	}
	before, _ := auditSink.count()
	w := newFakeWriter()
	h.ServeHTTP(w, newTemplateRequest(sc, sc.body()))
	if err := sc.validate(w.status, w.contentType(), w.body); err != nil {
		t.Fatal(err)
	}
	req := newTemplateRequest(sc, sc.body())
	req.Header = sc.header()
	req.Header.Set("Authorization", "Bearer wrong")
	w.reset()
	h.ServeHTTP(w, req)
	if w.status != http.StatusUnauthorized {
		t.Fatalf("wrong token: HTTP %d, want 401", w.status)
	}
	if after, _ := auditSink.count(); after-before != 2 {
		t.Fatalf("%d audit lines for 2 requests", after-before)
	}
}

// The child side serves until its stdin closes.
func TestServe(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve("ours", setup{tools: 3}, inR, outW, time.Minute) }()
	line := make([]byte, 64)
	n, err := outR.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(string(line[:n])), "listening ")
	if !ok {
		t.Fatalf("child said %q", line[:n])
	}
	sc := &scenario{method: "tools/list", tools: 3}
	if _, err := fetchFingerprint(http.DefaultClient, "http://"+addr+"/mcp", sc, sc.body()); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after stdin closed")
	}
}

// One tiny run of the whole harness, both phases, through the real child
// processes, prints a table and finds no failures; the task scenarios are
// measured for ours only, with their ratio to call50, and the contestants
// without tasks are left out of their rows.
func TestRunTiny(t *testing.T) {
	all := allScenarios(10)
	taskget, taskcreate := scenarioNamed(t, "taskget"), scenarioNamed(t, "taskcreate")
	cfg := tinyConfig([]*scenario{all[0], all[1], taskget, taskcreate},
		[]*scenario{all[0], scenarioNamed(t, "read1k"), scenarioNamed(t, "prompt"), taskget},
		"floor", "ours", "ours+typed")
	cfg.rounds = 2
	rep, text := runReport(t, cfg)
	for _, want := range []string{"| tools/call echo 50 B | ours |", "| tools/list, 1 tool | floor |", "| 2 | ours |", "resources/read 1 KiB text", "prompts/get, 1 argument",
		"| tasks/get, completed task | ours |", "| tools/call echo 50 B as a task | ours |", "- Tasks ÷ tools/call echo 50 B (call50) of the same contestant, time (median of per-round ratios): ours taskget ",
		"### Loopback: tasks/get, completed task"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	for _, name := range []string{"floor", "ours+typed"} {
		for _, title := range []string{taskget.title, taskcreate.title} {
			if row := "| " + title + " | " + name + " |"; strings.Contains(text, row) {
				t.Errorf("report has %q, which has no tasks", row)
			}
		}
	}
	_, loopTask, _ := strings.Cut(text, "### Loopback: tasks/get, completed task")
	loopTask, _, _ = strings.Cut(loopTask, "- req/s")
	if !strings.Contains(loopTask, "| 2 | ours |") || strings.Contains(loopTask, "| floor |") {
		t.Errorf("loopback taskget section is not ours alone:\n%s", loopTask)
	}
	if g := rep.goroutines[cellKey{"taskcreate", "ours"}]; g < 1 {
		t.Errorf("taskcreate: %v goroutines per request, want at least the task's run", g)
	}
	if testing.Verbose() {
		fmt.Println(text)
	}
}

// tinyConfig is a run of the harness as short as it gets: one round of
// 5 ms per cell in-process, one of 100 ms at 2 clients on loopback.
func tinyConfig(scenarios, loopScenarios []*scenario, contestants ...string) config {
	return config{
		rounds: 1, loopRounds: 1, benchtime: 5 * time.Millisecond,
		duration: 100 * time.Millisecond, warmup: 20 * time.Millisecond,
		conc: []int{2}, scenarios: scenarios, loopScenarios: loopScenarios,
		contestants: contestants, goroutineSamples: 2,
		inprocess: len(scenarios) > 0, loopback: len(loopScenarios) > 0, command: "test",
	}
}

// runReport runs the harness with cfg and returns the report and its
// text, failing t if any answer was wrong.
func runReport(t *testing.T, cfg config) (*report, string) {
	t.Helper()
	rep, err := run(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.write(&out)
	if rep.failed() {
		t.Fatalf("failures:\n%s", out.String())
	}
	return rep, out.String()
}

// startTestRedis starts a redis-server for t, stopped when t ends, and
// passes its address to the contestants (redisEnv). Without redis-server
// t skips, unless MCPMW_REQUIRE_REDIS is set.
func startTestRedis(t *testing.T) *redisServer {
	t.Helper()
	srv, err := startRedis()
	if err != nil {
		if os.Getenv("MCPMW_REQUIRE_REDIS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(srv.stop)
	t.Setenv(redisEnv, srv.addr)
	t.Setenv(redisTimeoutEnv, "5s") // answers and round trips are checked here, not speed
	return srv
}

func TestMedianAndQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if got := median(xs); got != 3 {
		t.Errorf("median %v = %v, want 3", xs, got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of 4 = %v, want 2.5", got)
	}
	if got := quantile(xs, 0.25); got != 2 {
		t.Errorf("p25 = %v, want 2", got)
	}
	if got := quantile(xs, 0.75); got != 4 {
		t.Errorf("p75 = %v, want 4", got)
	}
	if xs[0] != 5 {
		t.Error("median sorted its argument in place")
	}
}

// TestOursRedis: the opt-in contestant answers like ours+hooks, audits
// every request, and costs one Redis command per request. It needs
// redis-server; without one it skips, unless MCPMW_REQUIRE_REDIS is set (as
// .ci/run sets it).
func TestOursRedis(t *testing.T) {
	srv := startTestRedis(t)
	sc := allScenarios(100)[0]
	h, err := newContestant("ours+redis", sc.setup())
	if err != nil {
		t.Fatal(err)
	}
	before, _ := auditSink.count()
	res := benchCell(h, sc)
	if res.errors != 0 || res.iterations == 0 {
		t.Fatalf("ours+redis: %+v", res)
	}
	if after, _ := auditSink.count(); after-before != int64(res.iterations)+1 {
		t.Fatalf("%d audit lines for %d requests", after-before, res.iterations+1)
	}
	per, err := redisRoundTrips(srv, sc, 50)
	if err != nil {
		t.Fatal(err)
	}
	if per != 1 {
		t.Fatalf("%.2f Redis commands per request, want 1", per)
	}
}

// TestSkillsScenario: only ours serves skills100, whose answers list 100
// skills on one page; the report puts it beside list100 as a ratio.
func TestSkillsScenario(t *testing.T) {
	sc := scenarioNamed(t, "skills100")
	for _, name := range contestantNames {
		if got, want := supports(name, sc), name == "ours"; got != want {
			t.Errorf("supports(%s, skills100) = %v, want %v", name, got, want)
		}
	}
	h, err := newContestant("ours", sc.setup())
	if err != nil {
		t.Fatal(err)
	}
	w := newFakeWriter()
	h.ServeHTTP(w, newTemplateRequest(sc, sc.body()))
	if err := sc.validate(w.status, w.contentType(), w.body); err != nil {
		t.Fatal(err)
	}
	fewer := *sc
	fewer.skills = 99
	if err := fewer.validate(w.status, w.contentType(), w.body); err == nil {
		t.Error("an answer of 100 skills validates as one of 99")
	}
	r := &report{cells: map[cellKey][]cellResult{
		{"skills100", "ours"}: {{nsPerOp: 30}, {nsPerOp: 40}, {nsPerOp: 90, errors: 1}, {nsPerOp: 10}, {nsPerOp: 10}},
		{"list100", "ours"}:   {{nsPerOp: 20}, {nsPerOp: 10}, {nsPerOp: 10}, {nsPerOp: 0}, {nsPerOp: 10, errors: 1}},
	}}
	if got, ok := r.ratioOf("skills100", "list100", "ours"); !ok || got != 2.75 {
		t.Errorf("ratioOf = %v, %v; want the median of 1.5 and 4 (the rounds with an error or no time left out), 2.75", got, ok)
	}
	if _, ok := r.ratioOf("skills100", "list1", "ours"); ok {
		t.Error("a ratio with no cells to divide by")
	}
}
