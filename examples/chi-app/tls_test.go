package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTLSBinary runs the example binary with TLS_CERT and TLS_KEY: it
// serves HTTPS, and a client that offers HTTP/2 gets it, on the health
// check and on /mcp alike; and each way of getting the pair wrong (one
// without the other, a file it cannot read, a file that is no key) stops
// it at start, naming the variable, before it ever listens.
func TestTLSBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example binary")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := buildApp(t, dir)
	certPath, keyPath, pool := writeCertificate(t, dir)

	t.Run("HTTPS with HTTP/2", func(t *testing.T) {
		t.Parallel()
		addr := freeAddr(t)
		app := startApp(t, bin, "ADDR="+addr, "TLS_CERT="+certPath, "TLS_KEY="+keyPath)
		client := &http.Client{Timeout: patience, Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2: true, // a Transport with its own TLS config offers HTTP/2 only when asked to
		}}
		defer client.CloseIdleConnections()
		base := "https://" + addr
		app.waitReadyWith(t, client, base)
		assert.Contains(t, app.logs.String(), "chi-app: MCP endpoint at https://"+addr+"/mcp")

		resp, err := client.Get(base + "/healthz")
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, 2, resp.ProtoMajor, "the health check over %s", resp.Proto)
		assert.Equal(t, "h2", resp.TLS.NegotiatedProtocol)

		req := modern(readerToken, `1`, "tools/list", "")
		resp, err = client.Do(req.clientRequest(t, base+"/mcp"))
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, 2, resp.ProtoMajor, "tools/list over %s", resp.Proto)
		checkAnswer(t, req, expect{status: 200, check: listed(true, "echo", "add", "notes_list", "notes_export")}, resp.StatusCode, resp.Header, body)

		// Plain HTTP on the TLS port is refused, not served.
		plain := &http.Client{Timeout: patience}
		resp, err = plain.Get("http://" + addr + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "net/http answers plain HTTP on a TLS port with a 400")
		}
		app.interrupt(t)
	})

	missing := filepath.Join(dir, "no-such-file.pem")
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"TLS_CERT alone", []string{"TLS_CERT=" + certPath}, "chi-app: TLS_CERT is set but TLS_KEY is not"},
		{"TLS_KEY alone", []string{"TLS_KEY=" + keyPath}, "chi-app: TLS_KEY is set but TLS_CERT is not"},
		{"TLS_CERT unreadable", []string{"TLS_CERT=" + missing, "TLS_KEY=" + keyPath}, "chi-app: TLS_CERT: open " + missing},
		{"TLS_KEY unreadable", []string{"TLS_CERT=" + certPath, "TLS_KEY=" + missing}, "chi-app: TLS_KEY: open " + missing},
		{"TLS_KEY no key", []string{"TLS_CERT=" + certPath, "TLS_KEY=" + certPath},
			`chi-app: TLS_CERT="` + certPath + `", TLS_KEY="` + certPath + `": tls: `}, // then crypto/tls's words, which say it is the key
		{"TLS_CERT no certificate", []string{"TLS_CERT=" + keyPath, "TLS_KEY=" + keyPath},
			`chi-app: TLS_CERT="` + keyPath + `", TLS_KEY="` + keyPath + `": tls: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			app := startApp(t, bin, append([]string{"ADDR=" + freeAddr(t)}, tc.env...)...)
			assert.Contains(t, app.refused(t), tc.want)
		})
	}
}

// writeCertificate writes a self-signed certificate for 127.0.0.1 and its
// key as PEM files in dir, and returns their paths and a pool that trusts
// the certificate.
func writeCertificate(t *testing.T, dir string) (certPath, keyPath string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "chi-app test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600))
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certPath, keyPath, pool
}

// TestCertificateFromEnv: TLS_CERT and TLS_KEY, both or neither; a pair is
// loaded at start, and each way of getting it wrong names the variable.
func TestCertificateFromEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certPath, keyPath, _ := writeCertificate(t, dir)
	otherCert, otherKey, _ := writeCertificate(t, t.TempDir())
	missing := filepath.Join(dir, "no-such-file.pem")
	env := func(cert, key string) func(string) string {
		return func(k string) string { return map[string]string{"TLS_CERT": cert, "TLS_KEY": key}[k] }
	}

	c, err := configFromEnv(env("", ""))
	require.NoError(t, err)
	assert.Nil(t, c.certificate, "neither: plain HTTP")

	c, err = configFromEnv(env(certPath, keyPath))
	require.NoError(t, err)
	require.NotNil(t, c.certificate)
	want, err := tls.LoadX509KeyPair(certPath, keyPath)
	require.NoError(t, err)
	assert.Equal(t, want.Certificate, c.certificate.Certificate, "the chain read from TLS_CERT")

	for _, tc := range []struct{ name, cert, key, want string }{
		{"TLS_CERT alone", certPath, "", "TLS_CERT is set but TLS_KEY is not"},
		{"TLS_KEY alone", "", keyPath, "TLS_KEY is set but TLS_CERT is not"},
		{"TLS_CERT unreadable", missing, keyPath, "TLS_CERT: open " + missing},
		{"TLS_KEY unreadable", certPath, missing, "TLS_KEY: open " + missing},
		{"a key of another certificate", certPath, otherKey, `TLS_CERT="` + certPath + `", TLS_KEY="` + otherKey + `": tls: private key does not match public key`},
		{"a certificate of another key", otherCert, keyPath, `TLS_CERT="` + otherCert + `", TLS_KEY="` + keyPath + `": tls: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := configFromEnv(env(tc.cert, tc.key))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q, want it to start %q", err, tc.want)
		})
	}
}
