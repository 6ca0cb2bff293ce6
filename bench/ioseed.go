package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// seedSize is how much the I/O workload's Redis holds: carts (a hash
// each), order histories (a list of 20 entries each), members of the
// popularity sorted set, and rate-limit counters, for users and products
// numbered from 1.
type seedSize struct {
	carts, histories, popular, counters int
}

// fullSeed is the TM Dev Lab v2 benchmark's data set; smallSeed keeps
// every user the load generator plays (user-00001 to user-00050) and ten
// popular products, for smoke runs.
var (
	fullSeed  = seedSize{carts: 10_000, histories: 1_000, popular: 100_000, counters: 100}
	smallSeed = seedSize{carts: 100, histories: 100, popular: 1_000, counters: 100}
)

// The keys of the I/O workload.
const popularKey = "bench:popular"

func cartKey(user string) string    { return "bench:cart:" + user }
func historyKey(user string) string { return "bench:history:" + user }
func userName(n int) string         { return fmt.Sprintf("user-%05d", n) }

// seedItem is one item of a seeded cart.
type seedItem struct {
	ProductID int `json:"product_id"`
	Qty       int `json:"qty"`
}

// historyEntry is one seeded order of a user's history.
type historyEntry struct {
	OrderID   string  `json:"order_id"`
	ProductID int     `json:"product_id"`
	Qty       int     `json:"qty"`
	Price     float64 `json:"price"`
	TS        int64   `json:"ts"`
}

// seedRedis empties the database and fills it with size's data, in
// pipelines of at most seedBatch commands. Every cell of a run starts
// from it (the published benchmark flushes and re-seeds before each
// server): checkout appends to histories and bumps counters and scores.
func seedRedis(ctx context.Context, c *redis.Client, size seedSize) error {
	if err := c.FlushDB(ctx).Err(); err != nil {
		return err
	}
	const seedBatch = 5_000
	pipe := c.Pipeline()
	flush := func(force bool) error {
		if pipe.Len() == 0 || (!force && pipe.Len() < seedBatch) {
			return nil
		}
		_, err := pipe.Exec(ctx)
		return err
	}
	for n := 1; n <= size.carts; n++ {
		items := []seedItem{{ProductID: n*7%catalogSize + 1, Qty: 1 + n%3}, {ProductID: n*13%catalogSize + 1, Qty: 1 + n%2}}
		if n%3 == 0 {
			items = append(items, seedItem{ProductID: n*17%catalogSize + 1, Qty: 1})
		}
		total := 0.0
		for _, it := range items {
			total += float64(it.Qty) * float64(it.ProductID*100%9_999+1) / 100
		}
		itemsJSON, _ := json.Marshal(items)
		pipe.HSet(ctx, cartKey(userName(n)), "user_id", userName(n), "items", string(itemsJSON),
			"created", "1740000000", "expires", "1740086400", "total", fmt.Sprintf("%.2f", total))
		if err := flush(false); err != nil {
			return err
		}
	}
	for n := 1; n <= size.histories; n++ {
		entries := make([]any, 20)
		for j := 1; j <= 20; j++ {
			e, _ := json.Marshal(historyEntry{
				OrderID: fmt.Sprintf("ORD-%05d-%02d", n, j), ProductID: n*j*7%catalogSize + 1, Qty: 1 + j%3,
				Price: cents(float64(n*j*13%9_999+1) / 100), TS: 1_740_000_000 + int64(n)*86_400 + int64(j)*3_600,
			})
			entries[j-1] = string(e)
		}
		pipe.RPush(ctx, historyKey(userName(n)), entries...)
		if err := flush(false); err != nil {
			return err
		}
	}
	for i := 1; i <= size.popular; i++ {
		pipe.ZAdd(ctx, popularKey, redis.Z{Score: float64(i * 7 % 10_000), Member: fmt.Sprintf("product:%d", i)})
		if err := flush(false); err != nil {
			return err
		}
	}
	for n := 1; n <= size.counters; n++ {
		pipe.Set(ctx, "bench:ratelimit:"+userName(n), 0, 0)
	}
	return flush(true)
}
