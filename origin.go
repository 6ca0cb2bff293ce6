package mcpmw

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Origin checking defends against DNS rebinding: a web page on evil.example
// that re-points its own name at 127.0.0.1 can make the victim's browser POST
// to a server on loopback, and the browser considers that same-origin. It
// cannot hide where the page came from: browsers send an Origin header on
// every cross-origin and every POST fetch, naming the page's own origin. So a
// request whose Origin names a host outside the allow-list is refused with
// 403 before authentication runs.
//
// Requests without an Origin header are allowed: they come from programs
// (SDK clients, curl, server-to-server calls), which a browser page cannot
// impersonate. Such clients are the ones authentication is for.

// defaultAllowedHosts are the loopback names, for servers used locally.
var defaultAllowedHosts = []string{"localhost", "127.0.0.1", "::1"}

// hostSet is a normalised allow-list of hostnames.
type hostSet map[string]struct{}

// newHostSet normalises hosts (lower case, brackets around IPv6 removed) and
// panics on an entry that is not a bare hostname, since a scheme, port or
// path in the list is a configuration mistake that would silently never match.
func newHostSet(hosts []string) hostSet {
	if hosts == nil {
		hosts = defaultAllowedHosts
	}
	set := make(hostSet, len(hosts))
	for _, h := range hosts {
		n := strings.ToLower(strings.TrimSpace(h))
		if strings.HasPrefix(n, "[") && strings.HasSuffix(n, "]") {
			n = n[1 : len(n)-1]
		}
		if n == "" || strings.ContainsAny(n, "/@?#* ") || (strings.Contains(n, ":") && net.ParseIP(n) == nil) {
			panic(fmt.Sprintf("mcpmw: AllowedHosts entry %q is not a hostname (give a bare name such as %q, without scheme or port)", h, "app.example.com"))
		}
		for i := 0; i < len(n); i++ {
			if n[i] >= 0x80 {
				panic(fmt.Sprintf("mcpmw: AllowedHosts entry %q is not ASCII; browsers send internationalised names in their punycode (xn--) form, so list that", h))
			}
		}
		set[canonicalHost(n)] = struct{}{}
	}
	return set
}

// checkOrigin returns nil when origin is empty or names an allowed host, and
// otherwise an error saying why it was refused. The scheme and port are not
// compared: the hostname is what DNS rebinding forges.
func (s hostSet) checkOrigin(origin string) error {
	if origin == "" || s.listedOrigin(origin) {
		return nil
	}
	host, err := originHost(origin)
	if err != nil {
		return err
	}
	if _, ok := s[host]; !ok {
		return fmt.Errorf("origin host %q is not allowed", capEcho(host))
	}
	return nil
}

// listedOrigin reports whether origin is http:// or https:// and a
// host:port or host that the list spells as it is (an IPv6 address in
// brackets): what a browser sends from an allowed page, checked without
// url.Parse's allocation. Anything else goes through originHost, which
// decides alone what to refuse.
func (s hostSet) listedOrigin(origin string) bool {
	rest, ok := strings.CutPrefix(origin, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(origin, "http://"); !ok {
			return false
		}
	}
	host := rest
	if j := strings.LastIndexByte(rest, ':') + 1; j > 0 && !strings.HasSuffix(rest, "]") {
		port := rest[j:]
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
		host = rest[:j-1]
	}
	if inner, ok := strings.CutPrefix(host, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok || strings.IndexByte(inner, ':') < 0 {
			return false // brackets hold an IPv6 address only
		}
		host = inner
	} else if strings.IndexByte(host, ':') >= 0 {
		return false // an IPv6 address must be in brackets
	}
	_, ok = s[host]
	return ok
}

// checkHost returns nil when the Host header value hostport names an
// allowed host, and otherwise an error saying why it was refused.
func (s hostSet) checkHost(hostport string) error {
	if _, ok := s[hostport]; ok {
		return nil // a listed name without a port: nothing to parse
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if _, ok := s[host]; ok {
		return nil // as the list spells it: nothing to allocate
	}
	host = canonicalHost(strings.ToLower(host))
	if _, ok := s[host]; !ok || host == "" {
		return fmt.Errorf("host %q (the Host header) is not allowed", capEcho(hostport))
	}
	return nil
}

// originHost extracts the lower-cased hostname of a serialised origin
// (RFC 6454: scheme "://" host [ ":" port ], nothing else).
func originHost(origin string) (string, error) {
	if origin == "null" {
		return "", fmt.Errorf("opaque origin \"null\" is not allowed")
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || strings.ContainsAny(origin, "?#") || u.Opaque != "" {
		return "", fmt.Errorf("malformed Origin %q", capEcho(origin))
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", fmt.Errorf("malformed Origin %q", capEcho(origin))
	}
	return canonicalHost(host), nil
}

// canonicalHost writes an IP address in its one canonical form (so that
// "0:0:0:0:0:0:0:1" and "::1", or an IPv4-mapped IPv6 address and the IPv4
// address, compare equal) and leaves names as they are.
func canonicalHost(host string) string {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().WithZone("").String()
	}
	return host
}
