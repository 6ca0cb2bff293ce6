package oauth

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpmw/mcpmw/internal/urisyntax"
)

// normalURL returns the normal form of an htu, or of the URL a request was
// sent to, in which the two are compared (RFC 9449 §4.3: "ignoring any
// query and fragment parts", after RFC 3986 §6.2.2 syntax-based and
// §6.2.3 scheme-based normalisation): scheme and host lower-cased, the
// scheme's default port dropped, the path's percent-encoding normalised
// (urisyntax.NormalizePercent), an empty path as "/", no query, no
// fragment. Only http and https URLs with a host have one; one with a
// query or a fragment has none, since an htu has neither (RFC 9449 §4.2)
// and the request's URL is compared without them. Dot-segments
// are left as they are, on both sides: a client that sent one named that
// path.
func normalURL(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", errors.New("not a URL")
	case u.Opaque != "" || u.User != nil:
		return "", errors.New("not a plain http(s) URL")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return "", errors.New("it has a query or a fragment")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", errors.New("not an http(s) URL")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	switch {
	case host == "":
		return "", errors.New("no host")
	case strings.Contains(host, ":") && (net.ParseIP(host) == nil || !strings.HasPrefix(u.Host, "[")):
		return "", errors.New("a host that is neither a name nor an address")
	}
	authority := host
	switch {
	case port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443"):
		authority = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"): // an IPv6 literal
		authority = "[" + host + "]"
	}
	path, err := urisyntax.NormalizePercent(u.EscapedPath(), 0)
	if err != nil {
		return "", err
	}
	if path == "" {
		path = "/"
	}
	return scheme + "://" + authority + path, nil
}

// requestURL returns the normal form of the URL the client sent r to:
// BaseURL and r's path when BaseURL is set; else r's scheme (https over
// TLS) and Host, or, with TrustForwarded, those of X-Forwarded-Proto and
// X-Forwarded-Host.
func (v *DPoPVerifier) requestURL(r *http.Request) (string, error) {
	path := r.URL.EscapedPath()
	if v.base != "" {
		return normalURL(v.base + path)
	}
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if v.forwarded {
		if p := lastValue(r.Header, "X-Forwarded-Proto"); p != "" {
			scheme = p
		}
		if h := lastValue(r.Header, "X-Forwarded-Host"); h != "" {
			host = h
		}
	}
	return normalURL(scheme + "://" + host + path)
}

// lastValue returns the last comma-separated element of h's last name
// field, trimmed: the one the nearest proxy wrote.
func lastValue(h http.Header, name string) string {
	vs := h.Values(name)
	if len(vs) == 0 {
		return ""
	}
	v := vs[len(vs)-1]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}
