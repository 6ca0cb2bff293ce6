package redistest

import (
	"bufio"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartCluster starts a Redis Cluster of n masters (at least 3, no
// replicas), each a Server of its own, with the slots spread over them by
// redis-cli --cluster create, and waits until every node says the cluster
// is ok. It skips or fails as Start does, and stops every node when t
// ends. It returns the nodes' addresses, for redis.ClusterOptions.Addrs.
func StartCluster(t testing.TB, n int) []string {
	t.Helper()
	if n < 3 {
		t.Fatalf("redistest: a cluster needs at least 3 masters, not %d", n)
	}
	server, cli := lookPath(t, "redis-server"), lookPath(t, "redis-cli")
	var addrs []string
	for range n {
		s := start(t, server, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
		addrs = append(addrs, s.Addr)
	}
	out, err := exec.Command(cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(startTimeout)
	for _, addr := range addrs {
		for clusterState(addr) != "ok" {
			if time.Now().After(deadline) {
				t.Fatalf("redistest: the cluster on %v is not ok within %s (node %s says %q)", addrs, startTimeout, addr, clusterState(addr))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return addrs
}

// clusterState returns what CLUSTER INFO says of the cluster at addr
// (cluster_state), or "" when it cannot be asked.
func clusterState(addr string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("CLUSTER INFO\r\n")); err != nil {
		return ""
	}
	r := bufio.NewReader(c)
	if _, err := r.ReadString('\n'); err != nil { // the bulk string's length
		return ""
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ""
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "cluster_state:"); ok {
			return v
		}
	}
}
