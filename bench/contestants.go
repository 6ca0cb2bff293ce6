package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing/fstest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/ratelimit"
	mcpredis "github.com/mcpmw/mcpmw/redis"
	"github.com/mcpmw/mcpmw/skills"
	"github.com/mcpmw/mcpmw/typed"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
	goredis "github.com/redis/go-redis/v9"
)

// contestantNames lists every contestant in table order; floor comes first
// because every ratio is taken against it. The default run measures them
// all but optInContestants, which need more than Go (ours+redis and
// ours+redistasks: a redis-server). taskContestants are the only ones that
// serve the task scenarios: the floor and the peers have no tasks
// extension, and the other variants of ours would measure nothing more.
var (
	contestantNames  = []string{"floor", "ours", "ours+hooks", "ours+redis", "ours+redistasks", "ours+typed", "gosdk", "mcpgo"}
	optInContestants = []string{"ours+redis", "ours+redistasks"}
	taskContestants  = []string{"ours", "ours+redistasks"}
)

// supports reports whether the contestant name serves sc; the harness
// measures, and reports, only the pairs it does.
func supports(name string, sc *scenario) bool {
	if sc.skills > 0 {
		return name == "ours" // no peer serves the Skills extension
	}
	return !sc.tasks || slices.Contains(taskContestants, name)
}

// The task settings of the contestants that serve tasks. The TTL outlasts
// any run, so that taskget's task, created once, is never forgotten and no
// task is swept while measured; a store's growth is bounded instead by the
// harness (a fresh handler per taskcreate cell, closed after it). The
// bound on running tasks is never reached, so that no call quietly runs
// as a plain one (taskcreate checks that every answer is a task).
const (
	benchTaskTTL        = 24 * time.Hour
	benchTaskMaxRunning = 1 << 20
)

// defaultContestants is contestantNames without the opt-in ones.
func defaultContestants() []string {
	var out []string
	for _, name := range contestantNames {
		if !slices.Contains(optInContestants, name) {
			out = append(out, name)
		}
	}
	return out
}

// pageSize is every contestant's tools/list page size: larger than any
// scenario's registry, so that everyone returns the whole list on one page.
const pageSize = 10000

// The tools every contestant serves: echo, and dummies named tool_0001 ….
const (
	echoDescription  = "Returns the message it is given."
	echoSchema       = `{"type":"object","properties":{"message":{"type":"string","description":"The text to send back."}},"required":["message"]}`
	dummySchema      = `{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","description":"At most this many results."}},"required":["query"]}`
	dummyDescription = "Looks things up in catalogue %04d; a stand-in tool for the benchmark."
)

func dummyName(i int) string { return fmt.Sprintf("tool_%04d", i) }

// A setup is what a contestant serves: echo and tools-1 dummies, plus, for
// the ask scenario only, the confirm tool (so that the tools/list
// scenarios' answers and counts stay the same), for the read1k scenario
// only, one text resource, and for the prompt scenario only, one prompt.
type setup struct {
	tools    int
	ask      bool // also serve confirm, which asks the client (input_required)
	resource bool // also serve the resource resourceURI
	prompt   bool // also serve the prompt promptName
	tasks    bool // serve echo as a TaskOptional tool, with a task store
	skills   int  // serve this many skills (ours only: the Skills extension)
	io       bool // serve only the I/O workload's tools (ioserver.go), instead of all the above
}

// The resource of the read1k scenario: 1 KiB of plain ASCII text, which no
// JSON encoder escapes.
const (
	resourceURI         = "bench://doc/1k"
	resourceName        = "doc-1k"
	resourceDescription = "A 1 KiB text document; a stand-in resource for the benchmark."
	resourceMimeType    = "text/plain"
)

var resourceText = message(1 << 10)

// The prompt of the prompt scenario: one required argument, one user
// message.
const (
	promptName                = "summarise"
	promptDescription         = "Asks for a summary of a topic."
	promptArgument            = "topic"
	promptArgumentDescription = "What to summarise."
)

// promptText is the prompt's one message, filled in with topic.
func promptText(topic string) string { return "Summarise " + topic + " in three sentences." }

// newContestant returns the handler of the named contestant, serving s at any
// path (the harness mounts it at /mcp).
func newContestant(name string, s setup) (http.Handler, error) {
	if s.io {
		return newIOContestant(name)
	}
	switch name {
	case "floor":
		return newFloor(s)
	case "ours":
		return newOurs(s, false), nil
	case "ours+hooks":
		return newOurs(s, true), nil
	case "ours+redis":
		return newOursRedis(s)
	case "ours+redistasks":
		return newOursRedisTasks(s)
	case "ours+typed":
		return newOursTyped(s), nil
	case "gosdk":
		return newGoSDK(s), nil
	case "mcpgo":
		return newMCPGo(s), nil
	}
	return nil, fmt.Errorf("unknown contestant %q (have %v)", name, contestantNames)
}

// discardLogger drops everything; peers that log get it so that no contestant
// pays for a log line the others do not write.
var discardLogger = slog.New(slog.DiscardHandler)

// ---- ours -------------------------------------------------------------------

type benchCaller struct{}

func (benchCaller) Can(mcpmw.Permission) bool { return true }
func (benchCaller) String() string            { return "bench-user" }

// taskCaller is benchCaller with the CallerID a task's caller must have.
type taskCaller struct{ benchCaller }

func (taskCaller) CallerID() string { return "bench-user" }

// closeHandler ends what h runs in the background, when it is ours: its
// tasks (Handler.Close waits for them to end), and ours+redistasks's Redis
// client.
func closeHandler(h http.Handler) {
	if c, ok := h.(interface{ Close() }); ok {
		c.Close()
	}
}

// The confirm tool of the ask scenario: it asks the client to confirm with
// an elicitation form, and has no arguments.
const (
	confirmDescription = "Deletes note 3 once the user confirms."
	confirmSchema      = `{"type":"object","properties":{}}`
	confirmMessage     = "Delete note 3?"
	confirmForm        = `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`
)

func ourTools(s setup) []mcpmw.Tool {
	tools := s.tools
	list := []mcpmw.Tool{{
		Name: "echo", Description: echoDescription, Permission: "read",
		InputSchema: json.RawMessage(echoSchema),
		Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			msg := args.String("message")
			if err := args.Err(); err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult(msg), nil
		},
	}}
	if s.tasks {
		list[0].Task = mcpmw.TaskOptional
	}
	for i := 1; i < tools; i++ {
		list = append(list, mcpmw.Tool{
			Name: dummyName(i), Description: fmt.Sprintf(dummyDescription, i), Permission: "read",
			InputSchema: json.RawMessage(dummySchema),
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("ok"), nil
			},
		})
	}
	if s.ask {
		list = append(list, mcpmw.Tool{
			Name: "confirm", Description: confirmDescription, Permission: "read",
			InputSchema: json.RawMessage(confirmSchema),
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				_, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm(confirmMessage, json.RawMessage(confirmForm)))
				return mcpmw.ToolResult{}, err // this round never carries the answer: input_required
			},
		})
	}
	return list
}

// addOurExtras adds to reg the resource and the prompt s asks for.
func addOurExtras(reg *mcpmw.Registry, s setup) {
	if s.prompt {
		reg.AddPrompts(mcpmw.Prompt{
			Name: promptName, Description: promptDescription, Permission: "read",
			Arguments: []mcpmw.PromptArgument{{Name: promptArgument, Description: promptArgumentDescription, Required: true}},
			Get: func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{
					mcpmw.UserMessage(mcpmw.TextContent(promptText(args[promptArgument]))),
				}}, nil
			},
		})
	}
	if s.resource {
		reg.AddResources(mcpmw.Resource{
			URI: resourceURI, Name: resourceName, Description: resourceDescription,
			MimeType: resourceMimeType, Permission: "read",
			Read: func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
				return []mcpmw.ResourceContents{mcpmw.TextContents(uri, resourceMimeType, resourceText)}, nil
			},
		})
	}
}

// addOurSkills registers n skills in reg, each a SKILL.md of a few lines
// and one reference file, as a team's skills are, and returns the
// extension serving them.
func addOurSkills(reg *mcpmw.Registry, n int) mcpmw.Extension {
	set := skills.New(reg)
	for i := range n {
		name := fmt.Sprintf("skill-%03d", i)
		set.Add(name, fstest.MapFS{
			"SKILL.md": {Data: []byte("---\nname: " + name + "\ndescription: " + fmt.Sprintf(dummyDescription, i) +
				"\nlicense: MIT\n---\n\n# " + name + "\n\nRead references/guide.md before you start.\n")},
			"references/guide.md": {Data: []byte(message(1 << 10))},
		}, "read")
	}
	return set.Extension()
}

// newOurs returns mcpmw's handler. Bare: an authenticator that admits every
// request and an auditor that does nothing. With hooks, what a deployment
// runs: a bearer-token check, mcpmw.JSONAuditor writing JSON lines, and the
// in-memory per-IP limiter (ratelimit.PerIP) with a limit the benchmark never
// reaches.
func newOurs(s setup, hooks bool) *mcpmw.Handler {
	if hooks {
		return newOursWith(s, ratelimit.PerIP(1<<30, time.Minute), nil)
	}
	return newOursWith(s, nil, nil)
}

// newOursWith is ours with hooks and limiter, or bare when limiter is nil.
// A setup with tasks keeps them in store (nil: the memory store), and its
// caller has a CallerID.
func newOursWith(s setup, limiter mcpmw.RateLimiter, store mcpmw.TaskStore) *mcpmw.Handler {
	var reg mcpmw.Registry
	reg.AddTools(ourTools(s)...)
	addOurExtras(&reg, s)
	opts := &mcpmw.Options{
		Server:    mcpmw.Implementation{Name: serverName, Version: serverVersion},
		PageSize:  pageSize,
		Logger:    discardLogger,
		CheckHost: true, // as the peers do by default since mcp-go v1.5.0 (guards_test.go)
	}
	if s.skills != 0 {
		opts.Extensions = []mcpmw.Extension{addOurSkills(&reg, s.skills)}
	}
	var caller mcpmw.Caller = benchCaller{}
	if s.tasks {
		opts.Tasks = &mcpmw.TaskOptions{Store: store, TTL: benchTaskTTL, MaxRunning: benchTaskMaxRunning}
		caller = taskCaller{}
	}
	if limiter == nil {
		allowAll := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return caller, nil })
		noAudit := mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {})
		return mcpmw.New(&reg, allowAll, noAudit, opts)
	}
	want := []byte("Bearer " + benchToken)
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		got := r.Header.Get("Authorization")
		if len(got) != len(want) || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			return nil, errors.New("bad bearer token")
		}
		return caller, nil
	})
	auditLog := mcpmw.JSONAuditor(&auditSink, nil)
	opts.RateLimit = limiter
	return mcpmw.New(&reg, authn, auditLog, opts)
}

// newOursRedis is ours+hooks with the Redis limiter of mcpredis, counting
// in the redis-server whose address is in redisEnv (see redis.go).
func newOursRedis(s setup) (*mcpmw.Handler, error) {
	addr := os.Getenv(redisEnv)
	if addr == "" {
		return nil, fmt.Errorf("ours+redis: no redis-server (%s is not set)", redisEnv)
	}
	return newOursWith(s, redisLimiter(goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})), nil), nil
}

// redisTasksHandler is ours+redistasks: the bare ours with its tasks in
// Redis (mcpredis.NewTaskStore), closed with the client it made.
type redisTasksHandler struct {
	*mcpmw.Handler
	client *goredis.Client
}

// Close ends the handler's tasks, then closes its client.
func (h redisTasksHandler) Close() {
	h.Handler.Close()
	_ = h.client.Close()
}

// newOursRedisTasks is ours+redistasks on the redis-server whose address
// is in redisEnv. On the scenarios without tasks it is the bare ours.
func newOursRedisTasks(s setup) (http.Handler, error) {
	addr := os.Getenv(redisEnv)
	if addr == "" {
		return nil, fmt.Errorf("ours+redistasks: no redis-server (%s is not set)", redisEnv)
	}
	client := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	return redisTasksHandler{newOursWith(s, nil, redisTaskStore(client)), client}, nil
}

// redisTaskStore is ours+redistasks's task store on client, with
// mcpredis's default timeout (50 ms) unless redisTimeoutEnv says
// otherwise: a store call Redis does not answer in time shows as a wrong
// answer, never as speed.
func redisTaskStore(client goredis.UniversalClient) mcpmw.TaskStore {
	return mcpredis.NewTaskStore(mcpredis.Config{Client: client, Logger: discardLogger, Timeout: redisTimeout()})
}

// redisTimeoutEnv names a Go duration that replaces mcpredis's default
// timeout: the harness's own tests set it, so that a busy machine's
// scheduling delays are not taken for a slow Redis (their checks are of
// answers and round trips, never of speed). Measurements leave it unset.
const redisTimeoutEnv = "MCPMW_BENCH_REDIS_TIMEOUT"

// redisTimeout is what redisTimeoutEnv says, or 0 (mcpredis's default).
func redisTimeout() time.Duration {
	d, _ := time.ParseDuration(os.Getenv(redisTimeoutEnv))
	return d
}

// redisLimiter is ours+redis's limiter on client: a limit never reached,
// failing closed.
func redisLimiter(client goredis.UniversalClient) mcpmw.RateLimiter {
	cfg := mcpredis.Config{Client: client, Failure: mcpredis.FailClosed, Logger: discardLogger, Timeout: redisTimeout()}
	return mcpredis.PerIP(cfg, 1<<30, time.Minute)
}

// echoIn is the typed echo's arguments: the same schema as echoSchema, plus
// "additionalProperties": false, which NewTool derives for every struct.
type echoIn struct {
	Message string `json:"message" jsonschema:"The text to send back."`
}

// newOursTyped is the bare ours with echo built by typed.NewTool: its
// arguments validated against the derived schema, then decoded into a
// struct. The dummies stay raw-JSON tools.
func newOursTyped(s setup) *mcpmw.Handler {
	list := ourTools(s)
	list[0] = typed.NewTool("echo", echoDescription, "read",
		func(_ context.Context, _ mcpmw.Caller, in echoIn) (string, error) { return in.Message, nil })
	var reg mcpmw.Registry
	reg.AddTools(list...)
	addOurExtras(&reg, s)
	allowAll := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return benchCaller{}, nil })
	noAudit := mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {})
	return mcpmw.New(&reg, allowAll, noAudit, &mcpmw.Options{
		Server:    mcpmw.Implementation{Name: serverName, Version: serverVersion},
		PageSize:  pageSize,
		Logger:    discardLogger,
		CheckHost: true,
	})
}

// auditSink receives the JSON lines of every ours+hooks handler in the
// process.
var auditSink lineCounter

// lineCounter is an io.Writer that counts what it is given and keeps nothing
// (like io.Discard, but the harness can check that every request was
// audited). It is safe for concurrent use.
type lineCounter struct {
	mu    sync.Mutex
	lines int64
	bytes int64
}

func (c *lineCounter) Write(p []byte) (int, error) {
	n := int64(bytes.Count(p, []byte{'\n'}))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines += n
	c.bytes += int64(len(p))
	return len(p), nil
}

func (c *lineCounter) count() (lines, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines, c.bytes
}

// ---- go-sdk -----------------------------------------------------------------

// newGoSDK returns the official SDK's handler: one shared *Server, stateless,
// plain JSON responses. Tools use the low-level Server.AddTool with a raw
// schema (its cheapest path: no reflection, no per-call schema validation).
func newGoSDK(st setup) http.Handler {
	tools := st.tools
	s := gosdk.NewServer(&gosdk.Implementation{Name: serverName, Version: serverVersion},
		&gosdk.ServerOptions{PageSize: pageSize, Logger: discardLogger})
	s.AddTool(&gosdk.Tool{Name: "echo", Description: echoDescription, InputSchema: json.RawMessage(echoSchema)},
		func(_ context.Context, req *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
			var in struct {
				Message *string `json:"message"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Message == nil {
				return &gosdk.CallToolResult{IsError: true, Content: []gosdk.Content{&gosdk.TextContent{Text: "message (a string) is required"}}}, nil
			}
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: *in.Message}}}, nil
		})
	ok := func(context.Context, *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
		return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "ok"}}}, nil
	}
	for i := 1; i < tools; i++ {
		s.AddTool(&gosdk.Tool{Name: dummyName(i), Description: fmt.Sprintf(dummyDescription, i), InputSchema: json.RawMessage(dummySchema)}, ok)
	}
	if st.ask {
		s.AddTool(&gosdk.Tool{Name: "confirm", Description: confirmDescription, InputSchema: json.RawMessage(confirmSchema)},
			func(context.Context, *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
				return &gosdk.CallToolResult{InputRequests: gosdk.InputRequestMap{
					"confirm": &gosdk.ElicitParams{Mode: "form", Message: confirmMessage, RequestedSchema: json.RawMessage(confirmForm)},
				}}, nil
			})
	}
	if st.resource {
		s.AddResource(&gosdk.Resource{URI: resourceURI, Name: resourceName, Description: resourceDescription, MIMEType: resourceMimeType},
			func(_ context.Context, req *gosdk.ReadResourceRequest) (*gosdk.ReadResourceResult, error) {
				return &gosdk.ReadResourceResult{Contents: []*gosdk.ResourceContents{
					{URI: req.Params.URI, MIMEType: resourceMimeType, Text: resourceText},
				}}, nil
			})
	}
	if st.prompt {
		// go-sdk does not check required arguments; the handler does.
		s.AddPrompt(&gosdk.Prompt{Name: promptName, Description: promptDescription,
			Arguments: []*gosdk.PromptArgument{{Name: promptArgument, Description: promptArgumentDescription, Required: true}}},
			func(_ context.Context, req *gosdk.GetPromptRequest) (*gosdk.GetPromptResult, error) {
				topic, ok := req.Params.Arguments[promptArgument]
				if !ok {
					return nil, errors.New("the topic argument is required")
				}
				return &gosdk.GetPromptResult{Messages: []*gosdk.PromptMessage{
					{Role: "user", Content: &gosdk.TextContent{Text: promptText(topic)}},
				}}, nil
			})
	}
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: discardLogger})
}

// ---- mcp-go -----------------------------------------------------------------

// newMCPGo returns mcp-go's streamable HTTP server in stateless mode. Tools
// carry a raw schema (NewToolWithRawSchema), and are added in one batch.
func newMCPGo(st setup) http.Handler {
	tools := st.tools
	s := server.NewMCPServer(serverName, serverVersion,
		server.WithToolCapabilities(false), server.WithPaginationLimit(pageSize))
	list := []server.ServerTool{{
		Tool: mcp.NewToolWithRawSchema("echo", echoDescription, json.RawMessage(echoSchema)),
		Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			msg, err := req.RequireString("message")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(msg), nil
		},
	}}
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	for i := 1; i < tools; i++ {
		list = append(list, server.ServerTool{
			Tool:    mcp.NewToolWithRawSchema(dummyName(i), fmt.Sprintf(dummyDescription, i), json.RawMessage(dummySchema)),
			Handler: ok,
		})
	}
	if st.ask {
		list = append(list, server.ServerTool{
			Tool: mcp.NewToolWithRawSchema("confirm", confirmDescription, json.RawMessage(confirmSchema)),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{
					Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired},
					MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: mcp.InputRequests{
						"confirm": mcp.NewElicitationInputRequest(mcp.ElicitationParams{
							Mode: "form", Message: confirmMessage, RequestedSchema: json.RawMessage(confirmForm),
						}),
					}},
				}, nil
			},
		})
	}
	s.AddTools(list...)
	if st.resource {
		s.AddResource(mcp.NewResource(resourceURI, resourceName,
			mcp.WithResourceDescription(resourceDescription), mcp.WithMIMEType(resourceMimeType)),
			func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: resourceMimeType, Text: resourceText}}, nil
			})
	}
	if st.prompt {
		// mcp-go does not check required arguments; the handler does.
		s.AddPrompt(mcp.NewPrompt(promptName, mcp.WithPromptDescription(promptDescription),
			mcp.WithArgument(promptArgument, mcp.ArgumentDescription(promptArgumentDescription), mcp.RequiredArgument())),
			func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				topic, ok := req.Params.Arguments[promptArgument]
				if !ok {
					return nil, errors.New("the topic argument is required")
				}
				return mcp.NewGetPromptResult("", []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(promptText(topic))),
				}), nil
			})
	}
	return server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithStreamableHTTPLogger(discardLogger))
}

// ---- floor ------------------------------------------------------------------

// floorRequest is the fixed Go struct the floor decodes every request into.
type floorRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string `json:"name"`
		URI       string `json:"uri"`
		Arguments struct {
			Message string `json:"message"`
			Topic   string `json:"topic"`
		} `json:"arguments"`
		Meta struct {
			ProtocolVersion    string          `json:"io.modelcontextprotocol/protocolVersion"`
			ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
			ClientInfo         struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
	} `json:"params"`
}

// floor is the bare net/http handler every ratio is taken against: it
// decodes the request into a fixed struct with encoding/json and writes a
// canned reply of the same shape and size as ours. The canned bytes are cut
// from ours's own answers when the floor is built: for tools/list the whole
// pre-encoded result, for tools/call everything around the echoed text, which
// the floor encodes with encoding/json, for the confirm call the whole
// input_required result, for a read of the resource (whose URI it checks)
// everything around the resource's text, and for the prompt everything
// around its message's text: the floor encodes the text with encoding/json
// on every call, as a bare handler encodes what its store returns, just as
// it encodes the echoed text of a tools/call.
type floor struct {
	head       []byte // `{"jsonrpc":"2.0","id":`
	list       []byte // after the id: `,"result":{...tools...}}`
	ask        []byte // after the id: the input_required result of confirm (nil unless the setup asks)
	readBefore []byte // resources/read of resourceURI: after the id, up to the resource's text (nil unless the setup has it)
	readAfter  []byte // after the resource's text
	getBefore  []byte // prompts/get: after the id, up to the message's text (nil unless the setup has the prompt)
	getAfter   []byte // after the message's text
	callBefore []byte // after the id, up to the echoed text
	callAfter  []byte // after the echoed text
}

func newFloor(s setup) (*floor, error) {
	tools := s.tools
	ours := newOurs(s, false)
	list, err := cannedAfterID(ours, &scenario{method: "tools/list", tools: tools})
	if err != nil {
		return nil, fmt.Errorf("floor: tools/list template: %w", err)
	}
	const marker = "FLOOR-MARKER-1f2e3d4c"
	call, err := cannedAfterID(ours, &scenario{method: "tools/call", tools: tools, msgLen: -1, markerText: marker})
	if err != nil {
		return nil, fmt.Errorf("floor: tools/call template: %w", err)
	}
	quoted := []byte(strconv.Quote(marker))
	i := bytes.Index(call, quoted)
	if i < 0 || bytes.Count(call, quoted) != 1 {
		return nil, errors.New("floor: cannot find the echoed text in ours's tools/call answer")
	}
	var ask []byte
	if s.ask {
		if ask, err = cannedAfterID(ours, &scenario{method: "tools/call", tools: tools, tool: "confirm"}); err != nil {
			return nil, fmt.Errorf("floor: confirm template: %w", err)
		}
	}
	var readBefore, readAfter []byte
	if s.resource {
		read, err := cannedAfterID(ours, &scenario{method: "resources/read", tools: tools})
		if err != nil {
			return nil, fmt.Errorf("floor: resources/read template: %w", err)
		}
		quoted := []byte(strconv.Quote(resourceText))
		i := bytes.Index(read, quoted)
		if i < 0 || bytes.Count(read, quoted) != 1 {
			return nil, errors.New("floor: cannot find the resource's text in ours's resources/read answer")
		}
		readBefore, readAfter = read[:i], read[i+len(quoted):]
	}
	var getBefore, getAfter []byte
	if s.prompt {
		get, err := cannedAfterID(ours, &scenario{method: "prompts/get", tools: tools, msgLen: -1, markerText: marker})
		if err != nil {
			return nil, fmt.Errorf("floor: prompts/get template: %w", err)
		}
		quoted := []byte(strconv.Quote(promptText(marker)))
		i := bytes.Index(get, quoted)
		if i < 0 || bytes.Count(get, quoted) != 1 {
			return nil, errors.New("floor: cannot find the message's text in ours's prompts/get answer")
		}
		getBefore, getAfter = get[:i], get[i+len(quoted):]
	}
	return &floor{
		head:       []byte(`{"jsonrpc":"2.0","id":`),
		getBefore:  getBefore,
		getAfter:   getAfter,
		list:       list,
		ask:        ask,
		readBefore: readBefore,
		readAfter:  readAfter,
		callBefore: call[:i],
		callAfter:  call[i+len(quoted):],
	}, nil
}

// cannedAfterID runs sc against h and returns the answer's bytes after the
// id, checking that the answer starts the way the floor writes it.
func cannedAfterID(h http.Handler, sc *scenario) ([]byte, error) {
	w := newFakeWriter()
	h.ServeHTTP(w, newTemplateRequest(sc, sc.body()))
	prefix := `{"jsonrpc":"2.0","id":` + requestID
	if w.status != http.StatusOK || !bytes.HasPrefix(w.body, []byte(prefix)) {
		return nil, fmt.Errorf("unexpected answer %d %s", w.status, clip(w.body))
	}
	return bytes.Clone(w.body[len(prefix):]), nil
}

func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var req floorRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	id := req.ID
	switch {
	case req.Method == "tools/list":
		writeAnswer(w, f.head, id, f.list)
	case req.Method == "tools/call" && req.Params.Name == "echo":
		writeSpliced(w, f.head, id, f.callBefore, req.Params.Arguments.Message, f.callAfter)
	case req.Method == "tools/call" && req.Params.Name == "confirm" && f.ask != nil:
		writeAnswer(w, f.head, id, f.ask)
	case req.Method == "resources/read" && req.Params.URI == resourceURI && f.readBefore != nil:
		writeSpliced(w, f.head, id, f.readBefore, resourceText, f.readAfter)
	case req.Method == "prompts/get" && req.Params.Name == promptName && f.getBefore != nil:
		writeSpliced(w, f.head, id, f.getBefore, promptText(req.Params.Arguments.Topic), f.getAfter)
	default:
		http.Error(w, "unknown method", http.StatusNotFound)
	}
}

// writeSpliced writes a floor answer whose one dynamic part, text, is
// encoded with encoding/json on every call, as a bare handler encodes what
// its tool or store returns, between the canned bytes around it.
func writeSpliced(w http.ResponseWriter, head, id, before []byte, text string, after []byte) {
	enc, err := json.Marshal(text)
	if err != nil {
		http.Error(w, "cannot encode", http.StatusInternalServerError)
		return
	}
	writeAnswer(w, head, id, before, enc, after)
}

// writeAnswer writes the JSON answer made of parts, with its length.
func writeAnswer(w http.ResponseWriter, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	hdr := w.Header()
	hdr["Content-Type"] = []string{"application/json"}
	hdr["Content-Length"] = []string{strconv.Itoa(n)}
	w.WriteHeader(http.StatusOK)
	for _, p := range parts {
		_, _ = w.Write(p)
	}
}
