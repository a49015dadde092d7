// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The binaries of a real Kubernetes control plane for the deployment tests:
// etcd from Debian's etcd-server package (.ci/run installs it), and
// kube-apiserver and kubectl built by `make tools-kube` from the wrapper
// module internal/tools/kube into a cache outside the repository.
const (
	EtcdBinary    = "/usr/bin/etcd"
	EtcdBinaryEnv = "OTELCOL_LLMOPS_ETCD"
	// KubeDirEnv names a directory holding kube-apiserver and kubectl,
	// instead of the cache `make tools-kube` builds into.
	KubeDirEnv = "OTELCOL_LLMOPS_KUBE_DIR"
)

// KubeAdminUser is the static-token user of Kube.Kubeconfig, a member of
// system:masters.
const KubeAdminUser = "llmops-admin"

// Kube is a Kubernetes API server on loopback with its own etcd: no
// controller-manager, no scheduler, no kubelet. Objects are stored and
// validated, RBAC is enforced and ServiceAccount tokens are minted, but
// nothing reconciles: a DaemonSet gets no pods, and a pod's status is what a
// test writes through the status subresource.
type Kube struct {
	// URL is the API server's base URL (https://127.0.0.1:PORT).
	URL string
	// Kubeconfig is a kubeconfig file for the admin user (system:masters).
	Kubeconfig string
	// CAFile is the PEM file of the CA that signed the serving certificate.
	CAFile string
	// Version is the server's version (v1.34.x), from internal/tools/kube.
	Version string

	dir      string
	kubectl  string
	etcd     *kubeProc
	server   *kubeProc
	adminTok string
}

// kubeVersion is the k8s.io/kubernetes version internal/tools/kube/go.mod
// requires: the Makefile builds that one into kube-<version>.
func kubeVersion(t testing.TB) string {
	t.Helper()
	path := filepath.Join(RepoRoot(t), "internal", "tools", "kube", "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "k8s.io/kubernetes" && strings.HasPrefix(f[i+1], "v") {
				return f[i+1]
			}
		}
	}
	t.Fatalf("%s requires no k8s.io/kubernetes version", path)
	return ""
}

// KubeBinaries returns the paths of etcd, kube-apiserver and kubectl. When
// one is missing the test is skipped, or failed under CI (where a skip would
// hide that the tests never ran), with the step that provides it.
func KubeBinaries(t testing.TB) (etcd, apiserver, kubectl string) {
	t.Helper()
	version := kubeVersion(t)
	etcd = os.Getenv(EtcdBinaryEnv)
	if etcd == "" {
		etcd = EtcdBinary
	}
	dir := os.Getenv(KubeDirEnv)
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatalf("no cache directory: %v", err)
			}
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "otelcol-llmops", "tools", "kube-"+version)
	}
	apiserver = filepath.Join(dir, "kube-apiserver")
	kubectl = filepath.Join(dir, "kubectl")
	var missing []string
	if _, err := os.Stat(etcd); err != nil {
		missing = append(missing, fmt.Sprintf("etcd not found at %s: install the Debian package etcd-server (.ci/run does), or set %s", etcd, EtcdBinaryEnv))
	}
	for _, p := range []string{apiserver, kubectl} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, fmt.Sprintf("%s %s not found at %s: run `make tools-kube` (`make test` does), or set %s", filepath.Base(p), version, p, KubeDirEnv))
		}
	}
	if len(missing) > 0 {
		msg := strings.Join(missing, "; ")
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return etcd, apiserver, kubectl
}

// StartKube starts etcd and kube-apiserver on free loopback ports, with
// certificates and keys made for this run in a temporary directory, and
// waits until /readyz answers. Both are stopped when the test ends, passed
// or failed, or when starting fails; on failure their logs' tails are
// attached.
//
// The server authenticates static tokens (the admin user, in
// system:masters) and ServiceAccount tokens, authorizes with RBAC alone, and
// runs without the ServiceAccount admission plugin: with no
// controller-manager there is no token controller and no "default"
// ServiceAccount in a namespace, which that plugin would require of every
// pod. TokenRequest (`kubectl create token`) is served by the API server
// itself.
func StartKube(t testing.TB) *Kube {
	t.Helper()
	etcdBin, apiserverBin, kubectl := KubeBinaries(t)
	dir := t.TempDir()
	k := &Kube{dir: dir, kubectl: kubectl, Version: kubeVersion(t)}
	start := time.Now()

	// etcd: its own data directory, client and peer URLs on loopback.
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	k.etcd = startKubeProc(t, "etcd", filepath.Join(dir, "etcd.log"), etcdBin,
		"--name=default",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+clientURL,
		"--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		"--initial-cluster-state=new",
		"--logger=zap",
		"--log-level=warn",
	)
	waitHTTP(t, k.etcd, clientURL+"/health", nil, "", 30*time.Second, func(body []byte) bool {
		return bytes.Contains(body, []byte(`"health":"true"`))
	})

	// kube-apiserver.
	ca, caKey := kubeCA(t, filepath.Join(dir, "ca.crt"))
	k.CAFile = filepath.Join(dir, "ca.crt")
	servingCert, servingKey := filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	kubeServingCert(t, ca, caKey, servingCert, servingKey)
	saKey, saPub := filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	kubeSAKey(t, saKey, saPub)
	k.adminTok = randomToken(t)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n", k.adminTok, KubeAdminUser, KubeAdminUser)), 0o600); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	k.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	k.server = startKubeProc(t, "kube-apiserver", filepath.Join(dir, "kube-apiserver.log"), apiserverBin,
		"--etcd-servers="+clientURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--tls-cert-file="+servingCert,
		"--tls-private-key-file="+servingKey,
		"--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+saPub,
		"--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
		// A DaemonSet of a GPU agent may ask for privileged or host
		// namespaces; real clusters allow it, so must this one.
		"--allow-privileged=true",
		// The "kubernetes" Service's endpoints would name the advertise
		// address, and Endpoints reject loopback addresses: without this
		// the reconciler fails every few seconds in the log.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	waitHTTP(t, k.server, k.URL+"/readyz", pool, k.adminTok, 90*time.Second, func([]byte) bool { return true })

	k.Kubeconfig = k.WriteKubeconfig(t, KubeAdminUser, k.adminTok)
	t.Logf("kube-apiserver %s ready at %s in %s", k.Version, k.URL, time.Since(start).Round(time.Millisecond))
	return k
}

// WriteKubeconfig writes a kubeconfig for user authenticating with token
// against this API server and returns its path.
func (k *Kube) WriteKubeconfig(t testing.TB, user, token string) string {
	t.Helper()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: llmops-e2e
    cluster:
      server: %s
      certificate-authority: %s
users:
  - name: %s
    user:
      token: %s
contexts:
  - name: llmops-e2e
    context:
      cluster: llmops-e2e
      user: %s
      namespace: default
current-context: llmops-e2e
`, k.URL, k.CAFile, user, token, user)
	f, err := os.CreateTemp(k.dir, "kubeconfig-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(cfg); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// KubectlCmd returns kubectl with args, the admin kubeconfig and a cache
// directory of this server's own.
func (k *Kube) KubectlCmd(ctx context.Context, args ...string) *exec.Cmd {
	all := append([]string{"--kubeconfig=" + k.Kubeconfig, "--cache-dir=" + filepath.Join(k.dir, "kubectl-cache")}, args...)
	cmd := exec.CommandContext(ctx, k.kubectl, all...)
	cmd.Env = append(os.Environ(), "HOME="+k.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// TryKubectl runs kubectl (admin) with stdin (may be empty) and returns its
// standard output, standard error and error; it does not fail the test.
func (k *Kube) TryKubectl(stdin string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := k.KubectlCmd(ctx, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// Kubectl runs kubectl (admin) and returns its standard output, failing the
// test with its standard error when it fails.
func (k *Kube) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	return k.KubectlInput(t, "", args...)
}

// KubectlInput is Kubectl with stdin (`-f -`).
func (k *Kube) KubectlInput(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := k.TryKubectl(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, errOut, out)
	}
	return out
}

// Token mints a token for ServiceAccount sa in namespace ns through the
// TokenRequest API (`kubectl create token`), valid for an hour.
func (k *Kube) Token(t testing.TB, ns, sa string) string {
	t.Helper()
	tok := strings.TrimSpace(k.Kubectl(t, "create", "token", sa, "-n", ns, "--duration=1h"))
	if tok == "" {
		t.Fatalf("kubectl create token %s -n %s printed no token", sa, ns)
	}
	return tok
}

// ServiceAccountKubeconfig mints a token for ServiceAccount sa in ns and
// writes a kubeconfig that authenticates with it: what a pod of that
// ServiceAccount would hold, for a process running outside the cluster.
func (k *Kube) ServiceAccountKubeconfig(t testing.TB, ns, sa string) string {
	t.Helper()
	return k.WriteKubeconfig(t, "system:serviceaccount:"+ns+":"+sa, k.Token(t, ns, sa))
}

// kubeProc is one control-plane process: its own process group, killed with
// the test process, output to a log file, stopped at cleanup.
type kubeProc struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error
	once    sync.Once
}

func startKubeProc(t testing.TB, name, logPath, bin string, args ...string) *kubeProc {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = filepath.Dir(logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &kubeProc{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	// Cleanups run last-in first-out: the API server stops before its etcd.
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("---- log of %s (tail) ----\n%s", name, p.tail(8000))
		}
	})
	return p
}

// stop sends SIGTERM to the group, waits up to 15s, then kills it.
func (p *kubeProc) stop(t testing.TB) {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		select {
		case <-p.exited:
			return
		default:
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			t.Logf("%s did not stop within 15s of SIGTERM; killing it", p.name)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	})
}

func (p *kubeProc) tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return tail(string(b), n)
}

// waitHTTP polls url until it answers 200 with a body ok accepts, failing
// the test when p exits first or timeout passes.
func waitHTTP(t testing.TB, p *kubeProc, url string, roots *x509.CertPool, token string, timeout time.Duration, ok func([]byte) bool) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	if roots != nil {
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			var body bytes.Buffer
			_, _ = body.ReadFrom(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && ok(body.Bytes()) {
				return
			}
			last = fmt.Sprintf("%s: %s", resp.Status, tail(body.String(), 2000))
		} else {
			last = err.Error()
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before %s answered: %v", p.name, url, p.err)
		case <-deadline.C:
			t.Fatalf("%s: no ready answer from %s within %s: %s", p.name, url, timeout, last)
		case <-tick.C:
		}
	}
}

// kubeCA makes a self-signed CA (ECDSA P-256, valid one day) and writes its
// certificate to certPath.
func kubeCA(t testing.TB, certPath string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key := newECKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "otelcol-llmops e2e CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certPath, "CERTIFICATE", der)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// kubeServingCert writes a serving certificate for 127.0.0.1 (and the names
// in-cluster clients use) signed by the CA, and its key.
func kubeServingCert(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string) {
	t.Helper()
	key := newECKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certPath, "CERTIFICATE", der)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, keyPath, "EC PRIVATE KEY", kder)
}

// kubeSAKey writes the ServiceAccount token signing key and its public half.
func kubeSAKey(t testing.TB, keyPath, pubPath string) {
	t.Helper()
	key := newECKey(t)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, keyPath, "EC PRIVATE KEY", kder)
	pder, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, pubPath, "PUBLIC KEY", pder)
}

func newECKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func randomToken(t testing.TB) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
