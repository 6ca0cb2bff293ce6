package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpmw/mcpmw"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
	goredis "github.com/redis/go-redis/v9"
)

// The I/O workload's tools, the shapes of the TM Dev Lab v2 MCP server
// benchmark (early 2026): every call does real I/O, against a
// redis-server and the local HTTP API (ioapi.go), concurrently where the
// published servers do:
//
//   - search_products: GET /products/search, and ZRANGE REV of the
//     popularity set's top 10, at once; the products merged with their
//     popularity ranks.
//   - get_user_cart: HGETALL of the user's cart, then, at once, GET of its
//     first product and LRANGE of the user's 5 latest orders.
//   - checkout: POST /cart/calculate, and one pipeline of INCR (the
//     user's rate-limit counter), RPUSH (the order, onto the history) and
//     ZADD INCR (the product's popularity), at once.
//
// Every contestant runs the same code for them (ioBackend), answers with
// one text block holding the same JSON, and decodes its arguments the way
// its API offers: ours with Args.Decode, go-sdk with encoding/json on the
// raw arguments, mcp-go with BindArguments. What differs is the MCP
// server around them.
const (
	searchSchema   = `{"type":"object","properties":{"category":{"type":"string"},"min_price":{"type":"number"},"max_price":{"type":"number"},"limit":{"type":"integer"}}}`
	cartSchema     = `{"type":"object","properties":{"user_id":{"type":"string"}}}`
	checkoutSchema = `{"type":"object","properties":{"user_id":{"type":"string"},"items":{"type":"array","items":{"type":"object","properties":{"product_id":{"type":"integer"},"quantity":{"type":"integer"}},"required":["product_id","quantity"]}}}}`

	searchDescription   = "Search products by category and price range, merged with popularity data"
	cartDescription     = "Get user cart details with recent order history"
	checkoutDescription = "Process checkout: calculate total, update rate limit, record history"
)

// ioAPIURLEnv passes the API's base URL to the contestants' processes,
// as redisEnv passes Redis's address.
const ioAPIURLEnv = "MCPMW_BENCH_IOAPI_URL"

// The tools' arguments.
type (
	searchArgs struct {
		Category string  `json:"category"`
		MinPrice float64 `json:"min_price"`
		MaxPrice float64 `json:"max_price"`
		Limit    int     `json:"limit"`
	}
	cartArgs struct {
		UserID string `json:"user_id"`
	}
	checkoutItem struct {
		ProductID int `json:"product_id"`
		Quantity  int `json:"quantity"`
	}
	checkoutArgs struct {
		UserID string         `json:"user_id"`
		Items  []checkoutItem `json:"items"`
	}
)

// ioBackend is what the tools call: the API over a keep-alive client and
// Redis over go-redis's default pool, as the published Go server had them.
type ioBackend struct {
	api   string
	http  *http.Client
	redis *goredis.Client
}

// newIOBackend connects to the API and the redis-server named in the
// environment.
func newIOBackend() (*ioBackend, error) {
	api, addr := os.Getenv(ioAPIURLEnv), os.Getenv(redisEnv)
	if api == "" || addr == "" {
		return nil, fmt.Errorf("the I/O workload needs %s and %s", ioAPIURLEnv, redisEnv)
	}
	return &ioBackend{
		api: api,
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			Proxy: nil, MaxIdleConns: 200, MaxIdleConnsPerHost: 100, IdleConnTimeout: 90 * time.Second,
		}},
		redis: goredis.NewClient(&goredis.Options{Addr: addr}),
	}, nil
}

func (b *ioBackend) close() {
	b.http.CloseIdleConnections()
	_ = b.redis.Close()
}

// call sends one request to the API and decodes its JSON answer into v.
func (b *ioBackend) call(ctx context.Context, method, path string, body, v any) error {
	var rd io.Reader
	if body != nil {
		enc, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.api+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("API %s %s: HTTP %d", method, path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// both runs f and g at once and returns their errors.
func both(f, g func() error) error {
	var wg sync.WaitGroup
	var errF error
	wg.Add(1)
	go func() {
		defer wg.Done()
		errF = f()
	}()
	errG := g()
	wg.Wait()
	return errors.Join(errF, errG)
}

// rankedProduct is a product of search_products's answer.
type rankedProduct struct {
	ID             int     `json:"id"`
	SKU            string  `json:"sku"`
	Name           string  `json:"name"`
	Price          float64 `json:"price"`
	Rating         float32 `json:"rating"`
	PopularityRank int     `json:"popularity_rank"`
}

// searchResult is search_products's answer.
type searchResult struct {
	Category        string          `json:"category"`
	TotalFound      int             `json:"total_found"`
	Products        []rankedProduct `json:"products"`
	Top10PopularIDs []int           `json:"top10_popular_ids"`
}

func (b *ioBackend) searchProducts(ctx context.Context, a searchArgs) (string, error) {
	if a.Category == "" {
		a.Category = "Electronics"
	}
	if a.MinPrice == 0 {
		a.MinPrice = 50
	}
	if a.MaxPrice == 0 {
		a.MaxPrice = 500
	}
	if a.Limit == 0 {
		a.Limit = 10
	}
	q := url.Values{
		"category":  {a.Category},
		"min_price": {strconv.FormatFloat(a.MinPrice, 'f', -1, 64)},
		"max_price": {strconv.FormatFloat(a.MaxPrice, 'f', -1, 64)},
		"limit":     {strconv.Itoa(a.Limit)},
	}
	var found searchAnswer
	var popular []string
	err := both(
		func() error { return b.call(ctx, http.MethodGet, "/products/search?"+q.Encode(), nil, &found) },
		func() (err error) {
			popular, err = b.redis.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: popularKey, Start: 0, Stop: 9, Rev: true}).Result()
			return err
		},
	)
	if err != nil {
		return "", err
	}
	res := searchResult{Category: a.Category, TotalFound: found.TotalFound, Products: make([]rankedProduct, 0, len(found.Products)), Top10PopularIDs: make([]int, 0, len(popular))}
	rank := map[int]int{}
	for i, m := range popular {
		if id, err := strconv.Atoi(strings.TrimPrefix(m, "product:")); err == nil {
			res.Top10PopularIDs = append(res.Top10PopularIDs, id)
			rank[id] = i + 1
		}
	}
	for _, p := range found.Products {
		res.Products = append(res.Products, rankedProduct{ID: p.ID, SKU: p.SKU, Name: p.Name, Price: p.Price, Rating: p.Rating, PopularityRank: rank[p.ID]})
	}
	return marshalText(res)
}

// cartResult is get_user_cart's answer.
type cartResult struct {
	UserID string `json:"user_id"`
	Cart   struct {
		Items          []json.RawMessage `json:"items"`
		ItemCount      int               `json:"item_count"`
		EstimatedTotal float64           `json:"estimated_total"`
	} `json:"cart"`
	RecentHistory []json.RawMessage `json:"recent_history"`
}

func (b *ioBackend) userCart(ctx context.Context, a cartArgs) (string, error) {
	if a.UserID == "" {
		a.UserID = "user-00042"
	}
	cart, err := b.redis.HGetAll(ctx, cartKey(a.UserID)).Result()
	if err != nil {
		return "", err
	}
	var res cartResult
	res.UserID = a.UserID
	if err := json.Unmarshal([]byte(cmpOr(cart["items"], "[]")), &res.Cart.Items); err != nil {
		return "", fmt.Errorf("cart %s: items: %w", a.UserID, err)
	}
	res.Cart.ItemCount = len(res.Cart.Items)
	res.Cart.EstimatedTotal, _ = strconv.ParseFloat(cart["total"], 64)
	first := struct {
		ProductID int `json:"product_id"`
	}{ProductID: 1}
	if len(res.Cart.Items) > 0 {
		_ = json.Unmarshal(res.Cart.Items[0], &first)
	}
	var prod product // fetched, not merged into the answer, as published
	var history []string
	err = both(
		func() error {
			return b.call(ctx, http.MethodGet, "/products/"+strconv.Itoa(first.ProductID), nil, &prod)
		},
		func() (err error) {
			history, err = b.redis.LRange(ctx, historyKey(a.UserID), 0, 4).Result()
			return err
		},
	)
	if err != nil {
		return "", err
	}
	res.RecentHistory = make([]json.RawMessage, 0, len(history))
	for _, h := range history {
		if json.Valid([]byte(h)) {
			res.RecentHistory = append(res.RecentHistory, json.RawMessage(h))
		}
	}
	return marshalText(res)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkoutResult is checkout's answer.
type checkoutResult struct {
	OrderID        string  `json:"order_id"`
	UserID         string  `json:"user_id"`
	Total          float64 `json:"total"`
	ItemsCount     int     `json:"items_count"`
	RateLimitCount int64   `json:"rate_limit_count"`
	Status         string  `json:"status"`
}

func (b *ioBackend) checkout(ctx context.Context, a checkoutArgs) (string, error) {
	if a.UserID == "" {
		a.UserID = "user-00042"
	}
	if len(a.Items) == 0 {
		a.Items = []checkoutItem{{ProductID: 42, Quantity: 2}, {ProductID: 1337, Quantity: 1}}
	}
	userNum := 42
	if i := strings.LastIndexByte(a.UserID, '-'); i >= 0 {
		if n, err := strconv.Atoi(a.UserID[i+1:]); err == nil {
			userNum = n
		}
	}
	now := time.Now().Unix()
	order, err := json.Marshal(struct {
		OrderID string         `json:"order_id"`
		Items   []checkoutItem `json:"items"`
		TS      int64          `json:"ts"`
	}{fmt.Sprintf("ORD-%s-%d", a.UserID, now), a.Items, now})
	if err != nil {
		return "", err
	}
	var calc cartAnswer
	var incr *goredis.IntCmd
	err = both(
		func() error {
			return b.call(ctx, http.MethodPost, "/cart/calculate", cartRequest(a), &calc)
		},
		func() error {
			pipe := b.redis.Pipeline()
			incr = pipe.Incr(ctx, "bench:ratelimit:"+userName(userNum%100))
			pipe.RPush(ctx, historyKey(a.UserID), order)
			pipe.ZAddArgsIncr(ctx, popularKey, goredis.ZAddArgs{Members: []goredis.Z{{Score: 1, Member: fmt.Sprintf("product:%d", a.Items[0].ProductID)}}})
			_, err := pipe.Exec(ctx)
			return err
		},
	)
	if err != nil {
		return "", err
	}
	return marshalText(checkoutResult{
		OrderID: calc.OrderID, UserID: a.UserID, Total: calc.Total, ItemsCount: len(a.Items),
		RateLimitCount: incr.Val(), Status: "confirmed",
	})
}

func marshalText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// newIOContestant returns the named contestant serving the I/O
// workload's tools, on a backend of its own.
func newIOContestant(name string) (http.Handler, error) {
	b, err := newIOBackend()
	if err != nil {
		return nil, err
	}
	var h http.Handler
	switch name {
	case "ours":
		h = newOursIO(b)
	case "gosdk":
		h = newGoSDKIO(b)
	case "mcpgo":
		h = newMCPGoIO(b)
	default:
		b.close()
		return nil, fmt.Errorf("no contestant %q serves the I/O workload (have ours, gosdk, mcpgo)", name)
	}
	return ioHandler{h, b}, nil
}

// ioHandler is a contestant of the I/O workload, closed with its backend.
type ioHandler struct {
	http.Handler
	b *ioBackend
}

// Close ends the contestant's handler (ours: Handler.Close), then its
// backend's connections.
func (h ioHandler) Close() {
	closeHandler(h.Handler)
	h.b.close()
}

// ioTool is one of the tools, for any contestant: call decodes the
// arguments with the contestant's decode, then runs ioBackend's method.
type ioTool struct {
	name, description, schema string
	call                      func(ctx context.Context, decode func(any) error) (string, error)
}

// ioTools are the three tools over b.
func ioTools(b *ioBackend) []ioTool {
	return []ioTool{
		{"search_products", searchDescription, searchSchema, func(ctx context.Context, decode func(any) error) (string, error) {
			var a searchArgs
			if err := decode(&a); err != nil {
				return "", err
			}
			return b.searchProducts(ctx, a)
		}},
		{"get_user_cart", cartDescription, cartSchema, func(ctx context.Context, decode func(any) error) (string, error) {
			var a cartArgs
			if err := decode(&a); err != nil {
				return "", err
			}
			return b.userCart(ctx, a)
		}},
		{"checkout", checkoutDescription, checkoutSchema, func(ctx context.Context, decode func(any) error) (string, error) {
			var a checkoutArgs
			if err := decode(&a); err != nil {
				return "", err
			}
			return b.checkout(ctx, a)
		}},
	}
}

// newOursIO is the bare ours (every caller admitted, nothing audited, the
// Host checked) serving the tools; it serves 2026-07-28 and the legacy
// revisions at once.
func newOursIO(b *ioBackend) *mcpmw.Handler {
	var reg mcpmw.Registry
	for _, t := range ioTools(b) {
		reg.AddTools(mcpmw.Tool{
			Name: t.name, Description: t.description, Permission: "read", InputSchema: json.RawMessage(t.schema),
			Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				text, err := t.call(ctx, args.Decode)
				if err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult(text), nil
			},
		})
	}
	allowAll := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return benchCaller{}, nil })
	noAudit := mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {})
	return mcpmw.New(&reg, allowAll, noAudit, &mcpmw.Options{
		Server: mcpmw.Implementation{Name: serverName, Version: serverVersion}, Logger: discardLogger, CheckHost: true,
	})
}

// newGoSDKIO is go-sdk's stateless handler, answering in plain JSON,
// serving the tools through the raw-schema Server.AddTool.
func newGoSDKIO(b *ioBackend) http.Handler {
	s := gosdk.NewServer(&gosdk.Implementation{Name: serverName, Version: serverVersion}, &gosdk.ServerOptions{Logger: discardLogger})
	for _, t := range ioTools(b) {
		s.AddTool(&gosdk.Tool{Name: t.name, Description: t.description, InputSchema: json.RawMessage(t.schema)},
			func(ctx context.Context, req *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
				text, err := t.call(ctx, func(v any) error { return json.Unmarshal(req.Params.Arguments, v) })
				if err != nil {
					return nil, err
				}
				return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: text}}}, nil
			})
	}
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: discardLogger})
}

// newMCPGoIO is mcp-go's stateless streamable HTTP server serving the
// tools with raw schemas.
func newMCPGoIO(b *ioBackend) http.Handler {
	s := server.NewMCPServer(serverName, serverVersion, server.WithToolCapabilities(false))
	var list []server.ServerTool
	for _, t := range ioTools(b) {
		list = append(list, server.ServerTool{
			Tool: mcp.NewToolWithRawSchema(t.name, t.description, json.RawMessage(t.schema)),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				text, err := t.call(ctx, req.BindArguments)
				if err != nil {
					return nil, err
				}
				return mcp.NewToolResultText(text), nil
			},
		})
	}
	s.AddTools(list...)
	return server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithStreamableHTTPLogger(discardLogger))
}
