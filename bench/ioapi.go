package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The I/O workload's HTTP API: a product catalogue of 100,000 products
// built in memory at start, the "local API" every tool of the workload
// calls (ioserver.go). It serves the three routes of the TM Dev Lab v2
// benchmark's api-service, with the same data, so that a search answers
// the same products and counts:
//
//	GET  /products/search?category=&min_price=&max_price=&limit=  the category's products in the price range, cheapest first
//	GET  /products/{id}                                           one product
//	POST /cart/calculate                                          a cart's subtotal, tax, shipping, discount and total
//
// It runs in a process of its own (this binary re-executed with ioAPIEnv
// set), so that neither the load generator's garbage nor a contestant's
// shares its heap.
const ioAPIEnv = "MCPMW_BENCH_IOAPI"

// catalogSize is the number of products: ids 1 to catalogSize.
const catalogSize = 100_000

// product is one product of the catalogue, as the API writes it.
type product struct {
	ID          int      `json:"id"`
	SKU         string   `json:"sku"`
	Name        string   `json:"name"`
	Category    string   `json:"category"`
	Brand       string   `json:"brand"`
	Price       float64  `json:"price"`
	Stock       int      `json:"stock"`
	Rating      float32  `json:"rating"`
	Tags        []string `json:"tags"`
	Weight      float64  `json:"weight"`
	Description string   `json:"description"`
}

// The catalogue's vocabularies: product i (0-based) is in category i%20,
// of brand i%50, tagged from tagPool starting at i%8.
var (
	categories = []string{"Electronics", "Books", "Clothing", "Sports", "Home", "Garden", "Toys", "Food", "Beauty", "Automotive",
		"Music", "Movies", "Games", "Office", "Health", "Pets", "Travel", "Tools", "Jewelry", "Baby"}
	brands = []string{"Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta", "Iota", "Kappa",
		"Lambda", "Mu", "Nu", "Xi", "Omicron", "Pi", "Rho", "Sigma", "Tau", "Upsilon",
		"Phi", "Chi", "Psi", "Omega", "Apex", "Nexus", "Vertex", "Zenith", "Nadir", "Flux",
		"Forge", "Craft", "Build", "Make", "Create", "Design", "Style", "Form", "Shape", "Mold",
		"Cast", "Weld", "Fuse", "Bond", "Link", "Chain", "Wire", "Mesh", "Weave", "Knit"}
	tagPool = []string{"sale", "new", "featured", "bestseller", "clearance", "limited", "popular", "exclusive"}
)

// cents rounds to two decimals.
func cents(f float64) float64 { return math.Round(f*100) / 100 }

// catalog is the API's data: every product, and each category's products
// by position.
type catalog struct {
	products   []product
	byCategory map[string][]int
}

// newCatalog builds the catalogue. Its prices make the workload's search
// (Electronics, 50 to 500) find 2,251 products.
func newCatalog() *catalog {
	c := &catalog{products: make([]product, catalogSize), byCategory: map[string][]int{}}
	for i := range catalogSize {
		cat, brand := categories[i%len(categories)], brands[i%len(brands)]
		tags := make([]string, 2+i%3)
		for j := range tags {
			tags[j] = tagPool[(i+j)%len(tagPool)]
		}
		c.products[i] = product{
			ID: i + 1, SKU: fmt.Sprintf("SKU-%06d", i+1), Name: fmt.Sprintf("%s %s Item %d", brand, cat, i+1),
			Category: cat, Brand: brand, Price: 1 + float64(i%99900)/100, Stock: i % 501,
			Rating: 1 + float32(i%40)/10, Tags: tags, Weight: cents(float64(1+i%100) * 0.1),
			Description: fmt.Sprintf("Quality %s by %s. SKU %06d.", cat, brand, i+1),
		}
		c.byCategory[cat] = append(c.byCategory[cat], i)
	}
	return c
}

// handler serves the API's routes.
func (c *catalog) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /products/search", c.search)
	mux.HandleFunc("GET /products/{id}", c.get)
	mux.HandleFunc("POST /cart/calculate", c.calculate)
	return mux
}

// searchAnswer is what GET /products/search writes.
type searchAnswer struct {
	Category   string    `json:"category"`
	TotalFound int       `json:"total_found"`
	Products   []product `json:"products"`
}

func (c *catalog) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	category := q.Get("category")
	if category == "" {
		category = "Electronics"
	}
	minPrice, _ := strconv.ParseFloat(q.Get("min_price"), 64)
	maxPrice, _ := strconv.ParseFloat(q.Get("max_price"), 64)
	if maxPrice == 0 {
		maxPrice = math.MaxFloat64
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 10
	}
	var found []product
	for _, i := range c.byCategory[category] {
		if p := c.products[i]; p.Price >= minPrice && p.Price <= maxPrice {
			found = append(found, p)
		}
	}
	slices.SortStableFunc(found, func(a, b product) int {
		switch {
		case a.Price < b.Price:
			return -1
		case a.Price > b.Price:
			return 1
		}
		return 0
	})
	ans := searchAnswer{Category: category, TotalFound: len(found), Products: found[:min(limit, len(found))]}
	if ans.Products == nil {
		ans.Products = []product{}
	}
	writeJSON(w, ans)
}

func (c *catalog) get(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 1 || id > catalogSize {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, c.products[id-1])
}

// cartRequest is what POST /cart/calculate reads.
type cartRequest struct {
	UserID string         `json:"user_id"`
	Items  []checkoutItem `json:"items"`
}

// cartAnswer is what POST /cart/calculate writes.
type cartAnswer struct {
	OrderID    string  `json:"order_id"`
	UserID     string  `json:"user_id"`
	Subtotal   float64 `json:"subtotal"`
	Tax        float64 `json:"tax"`
	Shipping   float64 `json:"shipping"`
	Discount   float64 `json:"discount"`
	Total      float64 `json:"total"`
	ItemsCount int     `json:"items_count"`
}

func (c *catalog) calculate(w http.ResponseWriter, r *http.Request) {
	var req cartRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	subtotal := 0.0
	for _, it := range req.Items {
		if it.ProductID >= 1 && it.ProductID <= catalogSize {
			subtotal += c.products[it.ProductID-1].Price * float64(it.Quantity)
		}
	}
	subtotal = cents(subtotal)
	ans := cartAnswer{
		OrderID: fmt.Sprintf("ORD-%s-%d", strings.ReplaceAll(req.UserID, "-", ""), len(req.Items)),
		UserID:  req.UserID, Subtotal: subtotal, Tax: cents(subtotal * 0.085), Shipping: 5.99, ItemsCount: len(req.Items),
	}
	if subtotal >= 100 {
		ans.Discount, ans.Shipping = cents(subtotal*0.10), 0
	}
	ans.Total = cents(subtotal + ans.Tax + ans.Shipping - ans.Discount)
	writeJSON(w, ans)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// ioAPIMain is the API's process: it serves until its stdin closes, or
// for the lifetime given in ioAPIEnv.
func ioAPIMain(life string) {
	maxLife, err := time.ParseDuration(life)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench API: bad %s=%q: %v\n", ioAPIEnv, life, err)
		os.Exit(2)
	}
	if err := serveUntilEOF(newCatalog().handler(), os.Stdin, os.Stdout, maxLife); err != nil {
		fmt.Fprintln(os.Stderr, "bench API:", err)
		os.Exit(1)
	}
}
