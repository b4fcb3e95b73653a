package securetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// PKI is a private certificate authority with one server certificate (for
// 127.0.0.1 and localhost) and one client certificate, as PEM files.
type PKI struct {
	CAFile                string // the CA certificate
	ServerCert, ServerKey string // for 127.0.0.1 and localhost
	ClientCert, ClientKey string // a client certificate for mutual TLS

	pool *x509.CertPool
}

// NewPKI generates the CA and the certificates into a fresh temporary
// directory of t.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "go-cluster test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p := &PKI{CAFile: filepath.Join(dir, "ca.pem"), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	writePEM(t, p.CAFile, "CERTIFICATE", caDER)

	p.ServerCert, p.ServerKey = issue(t, dir, "server", ca, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	p.ClientCert, p.ClientKey = issue(t, dir, "client", ca, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "go-cluster node"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var serial atomic.Int64

// issue signs tmpl with the CA and writes <name>.pem and <name>-key.pem.
func issue(t testing.TB, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (certFile, keyFile string) {
	t.Helper()
	tmpl.SerialNumber = big.NewInt(serial.Add(1) + 1)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ServerTLS returns the server's TLS configuration; with verifyClients,
// clients must present a certificate signed by the CA (mutual TLS).
func (p *PKI) ServerTLS(t testing.TB, verifyClients bool) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(p.ServerCert, p.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if verifyClients {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, p.pool
	}
	return cfg
}

// ClientOptions are the nats.go options of a client that trusts the CA and
// presents the client certificate.
func (p *PKI) ClientOptions() []nats.Option {
	return []nats.Option{nats.RootCAs(p.CAFile), nats.ClientCert(p.ClientCert, p.ClientKey)}
}
